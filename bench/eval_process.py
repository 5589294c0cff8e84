"""Whole-process time of `agentgym eval` against an AgentGym-style evaluator run as its own
process, start-up included.

Both are child processes started and timed from here, one after the other, on the same
textcraft server (`agentgym env serve textcraft`, started here; each item's task built once
before either runs) with the same model (a tiny random Llama built here, seed 0, or
`--model DIR`), the same items (the first N of `--split`: textcraft's test split has 109),
greedy, 20 rounds of 32 new tokens at most:

- ours: `agentgym eval --env-server URL --split S --limit N --concurrency 64 ...
  policy.max_new_tokens=32`, as a user runs it: it imports what it needs, loads the model in a
  worker thread while its sessions open and reset, and batches the turns of its episodes
  (batches of 32, its default, with 64 episodes in flight, so that one batch's episodes step
  their envs while the other batch decodes: a 128-item profile found 0.03–0.04 s between
  batches otherwise, a tenth of the run);
- baseline: `agentgym_evaluator.py` (shared with `rollout.py`; it says where it differs from
  AgentGym and why): the loop of AgentGym's `Evaluator`, one episode at a time, the whole
  conversation re-encoded every turn, batch 1, its model and tokenizer loaded through the
  Auto classes before the first episode, as AgentGym's evaluator does.

It checks that both took the same greedy actions on every item. Both children get
`OMP_NUM_THREADS=--threads` (1 by default): on 2 cores shared with the env server, a 2-thread
team stalls on every small op whenever the other core is busy (`rollout.py` says more).

Then two runs of one item and one round: `agentgym eval` as a user runs it (starting its own
env server), whose whole time is the start-up's cost, and the same through a relay to the
bench's server that notes when the first request arrives (the time to first env request).

    .venv/bin/python bench/eval_process.py [--items 32,128] [--concurrency 64] [--threads 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from agentcli.data.jsonl import read_records
from agentcli.envs.textcraft import SPEC
from agentcli.envs.wire.client import EnvClient
from agentcli.envs.wire.launcher import server_process
from agentcli.models import build_tiny_model
from agentcli.records import Episode, parse_item_id

ROOT = Path(__file__).resolve().parents[1]
GOALS = {32: 5.0, 128: 10.0}  # the ratio each count should reach (issue #33)
ONE_ITEM_GOAL_S = 3.0


@dataclass
class Timed:
    seconds: float
    actions: dict[int, list[str]]
    first_request_s: float | None = None


def child_environment(threads: int) -> dict[str, str]:
    # The children import this checkout's agentcli, whatever the virtualenv installed.
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OMP_NUM_THREADS": str(threads),
        "HF_HUB_OFFLINE": "1",
    }


def run_timed(command: list[str], threads: int, log: Path) -> float:
    started = time.perf_counter()
    with log.open("w") as output:
        result = subprocess.run(
            command, stdout=output, stderr=subprocess.STDOUT, env=child_environment(threads)
        )
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        tail = "".join(log.read_text().splitlines(keepends=True)[-20:])
        raise SystemExit(f"{' '.join(command[1:4])} exited with {result.returncode}:\n{tail}")
    return seconds


def ours(
    url: str, model: Path, count: int, out: Path, args: argparse.Namespace, rounds: int
) -> Timed:
    command = [
        sys.executable, "-m", "agentcli.cli.main", "eval", "--env", "textcraft",
        "--env-server", url, "--model", str(model), "--split", args.split,
        "--limit", str(count), "--max-rounds", str(rounds),
        "--concurrency", str(args.concurrency), "--out", str(out), "--overwrite",
        f"policy.max_new_tokens={args.max_new_tokens}",
    ]  # fmt: skip
    seconds = run_timed(command, args.threads, out.with_suffix(".log"))
    episodes = read_records(out / "episodes.jsonl", Episode)
    errors = [episode.meta["error"] for episode in episodes if "error" in episode.meta]
    if errors:
        raise SystemExit(f"agentgym eval's episodes failed: {errors[0]}")
    actions = {parse_item_id(e.item_id)[1]: [step.action for step in e.steps] for e in episodes}
    return Timed(seconds, actions)


def baseline(url: str, model: Path, items: list[int], out: Path, args: argparse.Namespace) -> Timed:
    command = [
        sys.executable, str(ROOT / "bench" / "agentgym_evaluator.py"), "--env-server", url,
        "--model", str(model), "--items", ",".join(map(str, items)),
        "--max-rounds", str(args.max_rounds), "--max-new-tokens", str(args.max_new_tokens),
        "--out", str(out),
    ]  # fmt: skip
    seconds = run_timed(command, args.threads, out.with_suffix(".log"))
    actions = {int(index): taken for index, taken in json.loads(out.read_text()).items()}
    return Timed(seconds, actions)


class FirstRequestRelay:
    """A TCP relay to ``port`` on loopback, in a thread of its own, that notes when the first
    bytes of a request reach it (``first``, a ``time.perf_counter()``)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.first: float | None = None
        self._loop = asyncio.new_event_loop()
        started = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(started,), daemon=True)
        self._thread.start()
        started.wait()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listening_port}"

    def _serve(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._relay, "127.0.0.1", 0))
        self._listening_port = server.sockets[0].getsockname()[1]
        started.set()
        self._loop.run_forever()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.port)

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter, note: bool):
            try:
                while data := await source.read(65536):
                    if note and self.first is None:
                        self.first = time.perf_counter()
                    sink.write(data)
                    await sink.drain()
            finally:
                sink.close()

        await asyncio.gather(
            pipe(reader, upstream_writer, True),
            pipe(upstream_reader, writer, False),
            return_exceptions=True,
        )

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()


def one_item(url: str, model: Path, out: Path, args: argparse.Namespace) -> tuple[float, Timed]:
    """`agentgym eval` of one item and one round: on its own server, and through the relay."""
    command = [
        sys.executable, "-m", "agentcli.cli.main", "eval", "--env", "textcraft",
        "--model", str(model), "--split", args.split, "--limit", "1", "--max-rounds", "1",
        "--out", str(out / "alone"), "--overwrite", f"policy.max_new_tokens={args.max_new_tokens}",
    ]  # fmt: skip
    out.mkdir()
    alone = run_timed(command, args.threads, out / "alone.log")
    relay = FirstRequestRelay(int(url.rsplit(":", 1)[1]))
    try:
        started = time.perf_counter()
        relayed = ours(relay.url, model, 1, out / "relayed", args, rounds=1)
        assert relay.first is not None, "no request reached the relay"
        relayed.first_request_s = relay.first - started
    finally:
        relay.close()
    return alone, relayed


async def warmed_items(url: str, split: str, count: int) -> list[int]:
    """The first items of ``split``, each reset once so that neither side pays for its task."""
    async with EnvClient(url, SPEC.name) as client:
        items = (await client.split_indices(split))[:count]
        session = await client.open()
        for index in items:
            await session.reset(index)
        await session.close()
    return items


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", default="32,128", help="item counts, comma-separated")
    parser.add_argument("--split", default="train", help="textcraft's test split has 109 items")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--max-rounds", type=int, default=20)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS of both sides")
    parser.add_argument("--model", type=Path, help="Model dir (default: a tiny random Llama)")
    args = parser.parse_args()
    counts = [int(count) for count in args.items.split(",")]

    print(f"load average before: {load_average()} ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as tmp, server_process(SPEC.name) as (url, _):
        work = Path(tmp)
        model = args.model or build_tiny_model(work / "tiny", seed=0)
        every_item = asyncio.run(warmed_items(url, args.split, max(counts)))
        print(
            f"textcraft {args.split} items, {args.max_rounds} rounds of {args.max_new_tokens} "
            f"new tokens at most, greedy, cpu, OMP_NUM_THREADS={args.threads}, model "
            f"{model.name}, agentgym eval --concurrency {args.concurrency}"
        )
        for count in counts:
            items = every_item[:count]
            theirs = baseline(url, model, items, work / f"baseline-{count}.json", args)
            mine = ours(url, model, count, work / f"ours-{count}", args, args.max_rounds)
            ratio = theirs.seconds / mine.seconds
            goal = GOALS.get(count)
            same = sum(mine.actions[index] == theirs.actions[index] for index in items)
            turns = sum(len(taken) for taken in mine.actions.values())
            print(
                f"{len(items)} items ({turns} turns): AgentGym-style evaluator "
                f"{theirs.seconds:.1f} s, agentgym eval {mine.seconds:.1f} s: {ratio:.2f}x"
                + (f" (goal: {goal:g}x)" if goal else "")
                + f"; same greedy actions on {same}/{len(items)} items"
            )
            for index in [index for index in items if mine.actions[index] != theirs.actions[index]][
                :2
            ]:
                print(f"  item {index}: agentgym eval {mine.actions[index]}")
                print(f"  item {index}: AgentGym-style {theirs.actions[index]}")
        alone, relayed = one_item(url, model, work / "one", args)
        print(
            f"agentgym eval, 1 item x 1 round: {alone:.2f} s with its own env server "
            f"(goal: {ONE_ITEM_GOAL_S:g} s or less); {relayed.seconds:.2f} s on the bench's, "
            f"its first env request {relayed.first_request_s:.2f} s after its start"
        )
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
