"""Real GRPO through TRL on a built-in env: the adapter's reward moves a tiny model.

The tiny model is random, so it would never write a tool call by chance: its tokenizer gains
one token per whole call of ``act`` (four textcraft actions, two of them item 3's plan), and
sampling is limited to those and the end of turn. What is tested is the loop: TRL resets the
adapter, steps the env through the tool calls, scores the episodes with the env's reward, and
the update makes the winning calls likelier.
"""

from __future__ import annotations

import json

import pytest

from agentcli.conversation import StudentView
from agentcli.rl.environment import chatml_tool_template, environment_factory, prompt_rows

# no instruction: the prompt (Qwen2.5's system text and the tool schema, then the first
# observation) stays short, so that each step takes about a second
QUICK = StudentView(instruction=False)
ACTIONS = ["get 1 birch logs", "craft 4 birch planks using 1 birch logs", "inventory",
           "get 4 birch log"]  # fmt: skip


def tool_call_model(base):
    """The tiny model with Qwen2.5's tool template and one token per call of ``act``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(base)
    tokenizer.chat_template = chatml_tool_template()
    calls = [f"<tool_call>\n{json.dumps({'name': 'act', 'arguments': {'action': action}})}"
             "\n</tool_call>" for action in ACTIONS]  # fmt: skip
    tokenizer.add_tokens(calls)
    model = AutoModelForCausalLM.from_pretrained(base)
    model.resize_token_embeddings(len(tokenizer))
    kept = {tokenizer.convert_tokens_to_ids(call) for call in calls} | {tokenizer.eos_token_id}
    return model, tokenizer, [i for i in range(len(tokenizer)) if i not in kept]


@pytest.mark.slow
def test_grpo_through_the_adapter_raises_the_env_reward(tiny_model, tmp_path, monkeypatch):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    model, tokenizer, suppressed = tool_call_model(tiny_model)
    config = GRPOConfig(
        output_dir=str(tmp_path / "grpo"),
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        max_steps=10,
        num_generations=8,
        per_device_train_batch_size=8,
        learning_rate=0.01,
        max_completion_length=32,
        max_tool_calling_iterations=4,
        generation_kwargs={"suppress_tokens": suppressed},
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=config,
        train_dataset=Dataset.from_list(prompt_rows("textcraft", [3], QUICK) * 8),
        environment_factory=environment_factory("textcraft", view=QUICK),
    )
    trainer.train()
    rewards = [entry["reward"] for entry in trainer.state.log_history if "reward" in entry]
    assert len(rewards) == 10
    first, last = sum(rewards[:3]) / 3, sum(rewards[-3:]) / 3
    assert last >= first + 0.3, rewards
