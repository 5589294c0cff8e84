"""GRPO on one of agentgym's environments with TRL, the plain way: the env's reward is the reward.

    python examples/grpo_env.py --model MODEL_DIR --out OUT_DIR --env textcraft --items 3 4

The model plays each item through agentgym.rl's adapter (what it reads is what agentgym's
rollouts show; it acts by calling the ``act`` tool) and is saved to OUT_DIR/model, a
directory ``agentgym eval --model`` loads.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is experimental

import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

from agentcli.rl.environment import chatml_tool_template, environment_factory, prompt_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a Hugging Face model directory")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--env", default="textcraft")
    parser.add_argument("--items", type=int, nargs="+", required=True, help="item indices")
    parser.add_argument("--server", help="an env server's URL (default: the env in process)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--group", type=int, default=8, help="completions per item (G)")
    parser.add_argument("--turns", type=int, help="actions per episode at most")
    parser.add_argument("--beta", type=float, default=0.0, help="KL coefficient")
    parser.add_argument("--learning-rate", type=float, default=1e-5)
    parser.add_argument(
        "--tool-template",
        action="store_true",
        help="use Qwen2.5's ChatML template with tools (for a ChatML model without them)",
    )
    args = parser.parse_args()

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    if args.tool_template:
        tokenizer.chat_template = chatml_tool_template()
    model = AutoModelForCausalLM.from_pretrained(args.model)
    rows = prompt_rows(args.env, args.items) * args.group  # one group of G per item and step
    cpu = not torch.cuda.is_available()
    config = GRPOConfig(
        output_dir=str(args.out / "checkpoints"),
        max_steps=args.steps,
        num_generations=args.group,
        per_device_train_batch_size=args.group,
        beta=args.beta,
        learning_rate=args.learning_rate,
        max_completion_length=256,
        logging_steps=1,
        report_to=[],
        use_cpu=cpu,
        bf16=not cpu,
        gradient_checkpointing=not cpu,
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=config,
        train_dataset=Dataset.from_list(rows),
        environment_factory=environment_factory(args.env, server=args.server, max_turns=args.turns),
    )
    trainer.train()
    trainer.save_model(str(args.out / "model"))
    rewards = [entry["reward"] for entry in trainer.state.log_history if "reward" in entry]
    print(f"mean reward per step: {' '.join(f'{reward:.2f}' for reward in rewards)}")
    print(f"model written to {args.out / 'model'}")


if __name__ == "__main__":
    main()
