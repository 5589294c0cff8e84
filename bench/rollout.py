"""Episodes per second of the rollout engine against an AgentGym-style evaluation loop.

Both sides run the same textcraft test items with the same model (a tiny random Llama built
here, seed 0, or `--model DIR`) on the same device (`--device`, default cpu), greedy, against
one `agentgym env serve textcraft` child process:

- engine: `agentcli.rollout.run_rollout` with `LocalModelPolicy`, episodes in flight at once,
  their pending turns answered by one batched `generate` call;
- baseline: the loop of AgentGym's evaluator (`agentgym_evaluator.py`, shared with
  `eval_process.py`, which says where it differs from AgentGym and why): one env session reset
  for each item in turn, one episode at a time, every turn a batch-of-one `model.generate` on
  the whole conversation, re-encoded from its first token; greedy.

The tiny model rarely writes an action line or the end-of-turn token, so both sides generate
about `--max-new-tokens` every turn: the printed token counts show that they did the same work.

`--decoders own,generate` runs the engine once with each of the local policy's decoders (our
decode loop with kept caches, and transformers' `model.generate` per batch) and prints how the
two compare; `--no-baseline` leaves the AgentGym-style loop out (on a GPU with a real model
it is the slow part).

Model loading and the textcraft server's per-item task cache are warmed before either is
timed. Both sides use one torch thread unless `--threads` says otherwise: on 2 cores shared
with the env server and other work, a 2-thread team stalls on every one of batch-1 decoding's
many small ops whenever a core is busy, which slows the baseline several-fold, varies from run
to run with the machine's load, and would flatter the ratio. The defaults (6 rounds, 40 new
tokens a turn) keep the whole run under a minute or two on 2 cores.

    .venv/bin/python bench/rollout.py [--items 64] [--concurrency 32] [--threads 1]
    .venv/bin/python bench/rollout.py --device cuda --model models/smollm2-135m \
        --decoders own,generate --no-baseline
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from agentgym_evaluator import AgentGymStyleAgent, evaluate
from transformers.utils import logging as transformers_logging

from agentcli.conversation import DEFAULT_VIEW, env_opening, opening_messages
from agentcli.data.jsonl import read_records
from agentcli.envs.textcraft import SPEC
from agentcli.envs.wire.client import EnvClient
from agentcli.envs.wire.launcher import server_process
from agentcli.models import build_tiny_model
from agentcli.policy.local import LocalModelPolicy
from agentcli.records import ChatMessage, Episode, parse_item_id
from agentcli.rollout import run_rollout

SAMPLE = 8  # the first items, whose action sequences are compared one by one in the output


@dataclass
class Run:
    """One side's result: each item's actions, the work it took and the time it took."""

    actions: dict[int, list[str]]
    turns: int
    new_tokens: int
    seconds: float = 0.0

    @property
    def episodes_per_s(self) -> float:
        return len(self.actions) / self.seconds


def timed(work: Callable[[], Run]) -> Run:
    start = time.perf_counter()
    run = work()
    run.seconds = time.perf_counter() - start
    return run


async def warmed_items(url: str, count: int) -> list[int]:
    """The first test items, each reset once so that neither side pays for building its task."""
    async with EnvClient(url, SPEC.name) as client:
        items = (await client.split_indices("test"))[:count]
        session = await client.open()
        for index in items:
            await session.reset(index)
        await session.close()
    return items


def engine_run(
    policy: LocalModelPolicy, url: str, items: list[int], args: argparse.Namespace
) -> Run:
    with tempfile.TemporaryDirectory() as out:
        episodes_path = Path(out) / "episodes.jsonl"
        asyncio.run(
            run_rollout(
                SPEC,
                [url],
                policy,
                items,
                episodes_path,
                split="test",
                concurrency=args.concurrency,
                max_rounds=args.max_rounds,
            )
        )
        episodes = read_records(episodes_path, Episode)
    errors = [episode.meta["error"] for episode in episodes if "error" in episode.meta]
    if errors:
        raise SystemExit(f"the engine's episodes failed: {errors[0]}")
    return Run(
        actions={parse_item_id(e.item_id)[1]: [step.action for step in e.steps] for e in episodes},
        turns=sum(episode.n_steps for episode in episodes),
        new_tokens=sum(episode.meta["completion_tokens"] for episode in episodes),
    )


def baseline_run(agent: AgentGymStyleAgent, url: str, items: list[int], max_rounds: int) -> Run:
    agent.new_tokens = 0
    actions = evaluate(agent, url, items, max_rounds)
    turns = sum(len(sequence) for sequence in actions.values())
    return Run(actions, turns=turns, new_tokens=agent.new_tokens)


def describe(name: str, run: Run) -> str:
    return (
        f"{name}: {run.episodes_per_s:.2f} episodes/s ({len(run.actions)} episodes, "
        f"{run.turns} turns, {run.new_tokens:,} tokens generated, {run.seconds:.1f} s)"
    )


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--max-rounds", type=int, default=6)
    parser.add_argument("--max-new-tokens", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1, help="torch threads for both sides")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--model", type=Path, help="Model dir (default: a tiny random Llama)")
    parser.add_argument(
        "--decoders", default="own", help="the engine's decoders, in turn: own, generate or both"
    )
    parser.add_argument("--baseline", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    decoders = args.decoders.split(",")
    if not set(decoders) <= {"own", "generate"}:
        raise SystemExit(f"--decoders {args.decoders}: own, generate, or own,generate")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch sees no GPU here")
    transformers_logging.disable_progress_bar()  # the bars of weight loading, on stderr
    torch.set_num_threads(args.threads)

    print(f"load average before: {load_average()} ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as tmp, server_process(SPEC.name) as (url, _):
        model_dir = args.model or build_tiny_model(Path(tmp) / "tiny", seed=0)
        items = asyncio.run(warmed_items(url, args.items))
        print(
            f"{len(items)} textcraft test items, {args.max_rounds} rounds at most, "
            f"{args.max_new_tokens} new tokens a turn at most, greedy, {args.device}, "
            f"{args.threads} torch thread(s), model {model_dir.name}"
        )
        opening = env_opening(SPEC.name, SPEC.instruction, DEFAULT_VIEW)
        warm_up = [*opening_messages(opening), ChatMessage(role="user", content="warm-up")]
        runs: dict[str, Run] = {}
        if args.baseline:
            agent = AgentGymStyleAgent(model_dir, args.max_new_tokens, args.device)
            agent.reply(warm_up)
            runs["baseline"] = timed(lambda: baseline_run(agent, url, items, args.max_rounds))
            print(
                describe(
                    "baseline: AgentGym-style, one episode at a time, batch 1", runs["baseline"]
                )
            )
            del agent
        for decoder in decoders:
            policy = LocalModelPolicy(
                model_dir,
                max_new_tokens=args.max_new_tokens,
                batch_size=args.concurrency,
                device=args.device,
                decoder=decoder,
            )
            policy.generate([warm_up])
            runs[decoder] = timed(lambda policy=policy: engine_run(policy, url, items, args))
            print(
                describe(
                    f"engine ({decoder}): run_rollout, concurrency {args.concurrency}",
                    runs[decoder],
                )
            )
            del policy
    first, *others = list(runs)
    for name in others:
        ratio = runs[name].episodes_per_s / runs[first].episodes_per_s
        goal = " (goal: 5x or more)" if first == "baseline" else ""
        print(f"{name} against {first}: {ratio:.2f}x the episodes/s{goal}")
        same = [i for i in items if runs[name].actions[i] == runs[first].actions[i]]
        sample = items[:SAMPLE]
        print(
            f"  same greedy actions: {len(same)}/{len(items)} episodes, "
            f"first {len(sample)}: {len(set(sample) & set(same))}/{len(sample)}"
        )
        for index in sample:
            if index not in same:
                print(f"  item {index}: {name:9} {runs[name].actions[index]}")
                print(f"  item {index}: {first:9} {runs[first].actions[index]}")
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
