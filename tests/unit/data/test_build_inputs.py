"""build-data checks its inputs where they are: a demo that teaches nothing is refused by its
file and line, and an item demonstrated twice is learned once, with a warning."""

from __future__ import annotations

import logging

import pytest

from agentcli.data.build import BuildDataConfig, training_set
from agentcli.data.jsonl import write_records
from agentcli.errors import UsageError
from agentcli.records import Episode, Step
from agentcli.run_layout import RunLayout


def _demo(index: int, *steps: str) -> Episode:
    return Episode(
        item_id=f"textcraft_{index}", env="textcraft", instruction="Craft.", success=True,
        steps=[Step(observation=f"obs {n}", action=action) for n, action in enumerate(steps)],
    )  # fmt: skip


def _build(tmp_path, demos: list[Episode]):
    layout = RunLayout(tmp_path)
    write_records(layout.demos, demos)
    return training_set(BuildDataConfig(method="sft", iter=0, run=tmp_path, holdout=0))


def test_a_successful_demo_without_steps_is_refused_by_its_line(tmp_path):
    with pytest.raises(UsageError, match=r"demos.jsonl line 2: textcraft_1 succeeded in no step"):
        _build(tmp_path, [_demo(0, "get 1 oak log"), _demo(1)])


def test_an_item_demonstrated_twice_is_learned_once_from_its_last_demo(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="agentgym.data"):
        built = _build(tmp_path, [_demo(0, "first"), _demo(1, "get"), _demo(0, "second")])
    assert [record.item_id for record in built.train] == ["textcraft_0", "textcraft_1"]
    assert built.train[0].messages[-1].content.endswith("Action:\nsecond")
    assert "textcraft_0 has successful demos on lines 1 and 3" in caplog.text
