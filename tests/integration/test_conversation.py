"""Train and eval see the same conversation: for every built-in env and both prompt styles,
what build-data renders of a rollout's episodes is, step by step, what the rollout showed the
student."""

from __future__ import annotations

import asyncio

import pytest

from agentcli.conversation import StudentView, env_style
from agentcli.data.build import BuildDataConfig, training_set
from agentcli.data.jsonl import read_records, write_records
from agentcli.envs.registry import SPECS
from agentcli.envs.wire.launcher import env_servers
from agentcli.records import ChatMessage, Correction, CorrectionStep, Episode
from agentcli.rollout import run_rollout
from agentcli.run_layout import RunLayout
from tests.support.random_policy import RecordingPolicy

ITEMS = {"textcraft": [0, 1], "babyai": [0, 1], "babyai-putnext": [1000, 1001],
         "alfworld": [10000], "sciworld": [0], "webshop": [500, 501]}  # fmt: skip
MARKS = {"alfworld": (pytest.mark.alfworld,), "sciworld": (pytest.mark.java, pytest.mark.slow)}
VIEWS = [
    StudentView(prompt=prompt, **shape)
    for prompt in ("agentgym", "native")
    for shape in (
        {},  # the whole conversation
        {"history_steps": 1, "instruction": False, "reasons": False},
        {"format": "single-prompt", "history_steps": 2},
    )
]


def test_every_env_with_a_simulator_is_covered():
    assert {name for name, spec in SPECS.items() if spec.load is not None} == set(ITEMS)


@pytest.mark.parametrize(
    "env", [pytest.param(env, marks=MARKS.get(env, ())) for env in ITEMS]
)  # fmt: skip
def test_build_data_renders_what_the_rollout_showed(env, tmp_path):
    spec = SPECS[env]
    if spec.missing():
        pytest.skip(f"{env} cannot run here: {spec.missing()}")
    layout = RunLayout(tmp_path)
    with env_servers(spec, []) as urls:
        for view in VIEWS:
            policy = RecordingPolicy(seed=3, invalid_rate=0.2)
            out = tmp_path / f"{id(view)}.jsonl"
            # one seat: the turns come in item order, step by step
            asyncio.run(run_rollout(spec, urls, policy, ITEMS[env], out, split="train",
                                    concurrency=1, max_rounds=4, view=view))  # fmt: skip
            episodes = read_records(out, Episode)
            assert sum(e.n_steps for e in episodes) == len(policy.shown) >= 2
            assert {e.meta["prompt"] for e in episodes} == {env_style(env, view.prompt)}
            layout.rollout(0).parent.mkdir(parents=True, exist_ok=True)
            out.replace(layout.rollout(0))
            # a correction of every step, so that build-data renders each of them
            write_records(layout.corrections(0), [_relabel_all(e) for e in episodes])
            config = BuildDataConfig(method="dpo", iter=1, run=tmp_path, holdout=0, view=view,
                                     mix="all", keep_uncorrected=True)  # fmt: skip
            rendered = [record.prompt for record in training_set(config).train]
            assert [_text(prompt) for prompt in rendered] == [_text(s) for s in policy.shown]


def _relabel_all(episode: Episode) -> Correction:
    steps = [
        CorrectionStep(t=t, observation=step.observation, original_reason=step.reason,
                       original_action=step.action, corrected_reason="",
                       corrected_action="the teacher's action", is_corrected=True)
        for t, step in enumerate(episode.steps)
    ]  # fmt: skip
    return Correction(item_id=episode.item_id, summary="", steps=steps)


def _text(prompt: str | list[ChatMessage]) -> list[tuple[str, str]]:
    if isinstance(prompt, str):
        return [("user", prompt)]
    return [(message.role, message.content) for message in prompt]
