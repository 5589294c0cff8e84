"""A run directory as ``iterate`` leaves it after its rollouts and corrections: the expert's
demos, a random student's episodes per iteration and the oracle teacher's corrections of them."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from agentcli.data.jsonl import write_records
from agentcli.data.records import Correction, Episode
from agentcli.iterate.run_layout import RunLayout
from agentcli.policy.oracle import OraclePolicy
from agentcli.teacher.oracle import OracleTeacher
from tests.support.random_policy import RandomPolicy, rollout


def oracle_corrections(episodes: Sequence[Episode]) -> list[Correction]:
    """The env's expert's correction of each episode."""

    async def run() -> list[Correction]:
        teacher = OracleTeacher(episodes[0].env)
        try:
            return await asyncio.gather(*(teacher.correct(e, None) for e in episodes))
        finally:
            await teacher.aclose()

    return asyncio.run(run())


def corrected_run(
    layout: RunLayout, env: str, demo_items: Sequence[int], student_items: Mapping[int, list[int]]
) -> RunLayout:
    """Fill ``layout`` with demos of ``demo_items`` and, for each iteration k, a random
    student's episodes on ``student_items[k]`` (seeded by k) and their corrections."""
    rollout(env, list(demo_items), layout.demos, OraclePolicy())
    for k, items in student_items.items():
        episodes = rollout(env, items, layout.rollout(k), RandomPolicy(seed=k))
        write_records(layout.corrections(k), oracle_corrections(episodes))
    return layout
