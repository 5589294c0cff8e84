"""A run directory as ``iterate`` leaves it after its rollouts and corrections: the expert's
demos, a random student's episodes per iteration and the oracle teacher's corrections of them."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path

from agentcli.data.jsonl import write_records
from agentcli.envs.registry import get_spec
from agentcli.envs.wire.launcher import env_servers
from agentcli.policy.oracle import OraclePolicy
from agentcli.records import Correction, Episode, PrivilegedState
from agentcli.run_layout import RunLayout
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
    layout: RunLayout,
    env: str,
    demo_items: Sequence[int],
    student_items: Mapping[int, list[int]],
    urls: list[str] | None = None,
) -> RunLayout:
    """Fill ``layout`` with demos of ``demo_items`` and, for each iteration k, a random
    student's episodes on ``student_items[k]`` (seeded by k) and their corrections; played
    on the env servers at ``urls`` (default: a built-in one for each rollout)."""
    rollout(env, list(demo_items), layout.demos, OraclePolicy(), urls=urls)
    for k, items in student_items.items():
        episodes = rollout(env, items, layout.rollout(k), RandomPolicy(seed=k), urls=urls)
        write_records(layout.corrections(k), oracle_corrections(episodes))
    return layout


def evaluated_run(root: Path, env: str = "babyai-putnext") -> RunLayout:
    """A run of `agentgym iterate --iters 0-1` with the control, in miniature, for the view:
    a manifest; the expert's demos; model 0 (a random student) rolled out on training items
    and corrected by the oracle; held-out evals of model 0 (random), model 1 (the expert: it
    wins what model 0 lost) and the control (random again), with their metrics; report.png;
    and the privileged state of the rolled-out items."""
    from agentcli.evaluate import compute_metrics, write_metrics
    from agentcli.iterate.report import PLOT_NAME, plot_report, read_report
    from agentcli.iterate.runner import Manifest

    layout = RunLayout(root)
    where = layout.env(env)
    train, test = list(range(1000, 1003)), list(range(4))
    students = {where.eval(0): RandomPolicy(seed=0), where.eval(1): OraclePolicy(),
                where.control_eval(1): RandomPolicy(seed=2)}  # fmt: skip
    with env_servers(get_spec(env), []) as urls:  # one server for every rollout: seconds each
        corrected_run(where, env, train, {0: [1300, 1301, 1302]}, urls=urls)
        for folder, policy in students.items():
            played = rollout(env, test, folder / "episodes.jsonl", policy, urls=urls)
            write_metrics(compute_metrics(played), folder)
    states = [PrivilegedState(item_id=f"{env}_{i}", text=f"The goal object of item {i} is near.")
              for i in (1300, 1301, 1302)]  # fmt: skip
    write_records(where.privileged_state, states)
    manifest = Manifest(layout.manifest)
    for k in (0, 1):
        manifest.iterations[str(k)] = {"config": {"run": str(root), "envs": [env]}}
    manifest.save()
    plot_report(read_report(root), root / PLOT_NAME, title=root.name)
    return layout
