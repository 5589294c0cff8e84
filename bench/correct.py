"""Wall time of `correct` with an LLM teacher: our stage at --concurrency 16 against one call
at a time, the way LEAP's correction scripts call their teacher.

Both sides correct the same 200 failed student episodes (2-4 steps each) against one
OpenAI-compatible server of ours on loopback (tests/support/openai_server.py) that takes 500 ms to
answer every request, as a hosted LLM's latency would; its answers are instant to compute, so
the time measured is what waiting on the teacher costs, which is what concurrency saves.

- ours: `agentcli.teacher.stages.correct` with the LLM teacher, 16 requests in flight, writing
  corrections, the reply cache and the cost ledger as a real run does;
- baseline: a loop over the episodes that sends each the same prompt (our template) with the
  synchronous `openai` client, waits for the reply and parses it, then goes on to the next.

The baseline's time is all waiting (500 ms a call, one after another), so by default it runs
the first `--baseline-sample` episodes (20) and extrapolates to all 200 by its measured time
per call; the output says so. `--baseline-sample 200` runs all of them (about 100 s).

    PYTHONPATH=. .venv/bin/python bench/correct.py [--episodes 200] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

from openai import OpenAI

from agentcli.data.jsonl import write_records
from agentcli.records import Episode
from agentcli.teacher import TeacherConfig
from agentcli.teacher.llm import CorrectionReply, stage_prompt
from agentcli.teacher.llm_client import parse_reply
from agentcli.teacher.stages import CorrectConfig, correct
from tests.support.openai_server import openai_server
from tests.support.teacher_episodes import corrections_reply, student_episodes

LATENCY_S = 0.5


def ours(url: str, episodes: list[Episode], concurrency: int, folder: Path) -> float:
    write_records(folder / "rollout" / "episodes.jsonl", episodes)
    config = CorrectConfig(
        env="textcraft",
        rollout=folder / "rollout",
        teacher=TeacherConfig(kind="openai", base_url=url, model_name="m", concurrency=concurrency),
    )
    start = time.perf_counter()
    stats = correct(config)
    seconds = time.perf_counter() - start
    assert stats.done == len(episodes), stats
    return seconds


def one_at_a_time(url: str, episodes: list[Episode]) -> float:
    client = OpenAI(base_url=url, api_key="EMPTY")
    start = time.perf_counter()
    for episode in episodes:
        messages = stage_prompt("correct", episode, CorrectionReply, state=None,
                           reward=episode.reward, success=episode.success)  # fmt: skip
        completion = client.chat.completions.create(model="m", messages=messages, max_tokens=2048)
        reply = parse_reply(completion.choices[0].message.content or "", CorrectionReply)
        assert len(reply.steps) == episode.n_steps
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--baseline-sample", type=int, default=20)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # the stage warns that the fake model has no price

    episodes = student_episodes(args.episodes)
    sample = min(args.baseline_sample, args.episodes)
    with openai_server(corrections_reply(episodes)) as server, tempfile.TemporaryDirectory() as tmp:
        server.latency_s = LATENCY_S
        ours_s = ours(server.url, episodes, args.concurrency, Path(tmp))
        ours_requests = len(server.requests)
        baseline_sample_s = one_at_a_time(server.url, episodes[:sample])
    baseline_s = baseline_sample_s / sample * args.episodes

    print(f"{args.episodes} corrections, server latency {LATENCY_S * 1000:.0f} ms per request")
    print(
        f"ours (concurrency {args.concurrency}):  {ours_s:7.2f} s"
        f"  ({ours_requests} requests, {args.episodes / ours_s:.1f} corrections/s)"
    )
    if sample == args.episodes:
        print(f"one call at a time:     {baseline_s:7.2f} s  (all {sample} run)")
    else:
        print(
            f"one call at a time:     {baseline_s:7.2f} s  (extrapolated: the first {sample}"
            f" took {baseline_sample_s:.2f} s, {baseline_sample_s / sample:.3f} s per call)"
        )
    print(f"ratio: {baseline_s / ours_s:.1f}x (goal ≥ 10x)")


if __name__ == "__main__":
    main()
