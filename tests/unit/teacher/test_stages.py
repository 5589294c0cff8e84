"""Stage plumbing: which episodes get corrected, where outputs go, and how items that fail are
listed once and retried."""

from __future__ import annotations

import asyncio

import pytest

from agentcli.config import resolve_config
from agentcli.data.jsonl import read_records, write_records
from agentcli.errors import ConfigError, FatalRunError, ModelEndpointError
from agentcli.records import Episode, PrivilegedState, Step
from agentcli.run_layout import RunLayout
from agentcli.teacher.stages import (
    AnnotateConfig,
    CorrectConfig,
    ExtractStateConfig,
    Failure,
    run_items,
    select_episodes,
)


def episode(index: int, *, reward: float = 0.0, success: bool = False, steps: int = 1, **meta):
    return Episode(
        item_id=f"textcraft_{index}",
        env="textcraft",
        instruction="I",
        steps=[Step(observation="o", action="a")] * steps,
        reward=reward,
        success=success,
        meta=meta,
    )


def test_failed_episodes_are_corrected_by_default_in_item_order():
    episodes = [episode(5), episode(3, success=True, reward=1.0), episode(1), episode(2, steps=0),
                episode(4, end_reason="error")]  # fmt: skip
    assert [e.index for e in select_episodes(episodes, None, None)] == [1, 5]


def test_a_threshold_selects_by_reward_and_max_episodes_keeps_the_first():
    episodes = [episode(i, reward=i / 10, success=i > 5) for i in range(10)]
    assert [e.index for e in select_episodes(episodes, 0.75, None)] == list(range(8))
    assert [e.index for e in select_episodes(episodes, 0.75, 3)] == [0, 1, 2]


def test_an_items_last_episode_counts():
    retried = [episode(1, end_reason="error"), episode(1, reward=1.0, success=True)]
    assert select_episodes(retried, None, None) == []


def test_outputs_default_to_the_run_layout(tmp_path):
    layout = RunLayout(tmp_path / "runs" / "x")
    write_records(layout.privileged_state, [PrivilegedState(item_id="textcraft_0", text="t")])
    config = CorrectConfig(env="textcraft", rollout=layout.rollout(2).parent)
    assert config.output_path == layout.corrections(2)
    assert config.state == layout.privileged_state
    assert config.side_file("failures.jsonl") == layout.corrections(2).parent / "failures.jsonl"
    from_file = CorrectConfig(env="textcraft", rollout=layout.rollout(2))
    assert from_file.output_path == layout.corrections(2)

    annotated = AnnotateConfig(env="textcraft", demos=layout.demos)
    assert annotated.output_path == layout.annotated_demos
    assert annotated.side_file("ledger.jsonl") == layout.root / "demos.annotated.ledger.jsonl"
    state = ExtractStateConfig(env="textcraft", demos=layout.demos)
    assert state.output_path == layout.privileged_state


def test_a_rollout_outside_a_run_has_no_state_and_extract_state_needs_a_target(tmp_path):
    config = CorrectConfig(env="textcraft", rollout=tmp_path / "student.jsonl")
    assert config.state is None and config.output_path == tmp_path / "correction" / (
        "corrections.jsonl"
    )
    with pytest.raises(ConfigError, match="pass --out"):
        resolve_config(ExtractStateConfig, cli={"env": "textcraft"}, environ={}, dotenv=None)


def test_an_openai_teacher_needs_an_endpoint_and_a_model():
    with pytest.raises(ConfigError, match="needs --base-url and --model-name"):
        resolve_config(
            CorrectConfig,
            cli={"env": "textcraft", "rollout": "r", "teacher.kind": "openai"},
            environ={},
            dotenv=None,
        )


def test_failed_items_are_listed_once_and_retried_until_they_succeed(tmp_path):
    out, failures = tmp_path / "out.jsonl", tmp_path / "failures.jsonl"
    broken = {"textcraft_1", "textcraft_2"}

    def items():
        async def make(key: str) -> PrivilegedState:
            if key in broken:
                raise ModelEndpointError(f"{key} is broken")
            return PrivilegedState(item_id=key, text="t")

        return [(f"textcraft_{i}", lambda key=f"textcraft_{i}": make(key)) for i in range(4)]

    def run():
        return asyncio.run(run_items("s", items(), out, failures, concurrency=2))

    first, second = run(), run()
    assert (first.done, first.failed, second.skipped, second.failed) == (2, 2, 2, 2)
    listed = read_records(failures, Failure)
    assert [(f.item_id, f.reason) for f in listed] == [
        ("textcraft_1", "textcraft_1 is broken"), ("textcraft_2", "textcraft_2 is broken"),
    ]  # fmt: skip
    broken.discard("textcraft_2")
    third = run()
    assert (third.done, third.failed) == (1, 1)
    assert [f.item_id for f in read_records(failures, Failure)] == ["textcraft_1"]
    written = [state.item_id for state in read_records(out, PrivilegedState)]
    assert sorted(written) == ["textcraft_0", "textcraft_2", "textcraft_3"]


def test_a_fatal_error_stops_the_stage(tmp_path):
    async def fatal() -> PrivilegedState:
        raise FatalRunError("the key is refused")

    with pytest.raises(FatalRunError):
        asyncio.run(
            run_items(
                "s",
                [("textcraft_0", fatal)],
                tmp_path / "o.jsonl",
                tmp_path / "f.jsonl",
                concurrency=1,
            )  # fmt: skip
        )
    assert not (tmp_path / "f.jsonl").exists()


def test_an_llm_teacher_cannot_extract_state_without_demos():
    with pytest.raises(ConfigError, match="pass --demos"):
        resolve_config(
            ExtractStateConfig,
            cli={
                "env": "textcraft",
                "out": "o.jsonl",
                "teacher.kind": "openai",
                "teacher.base_url": "http://x/v1",
                "teacher.model_name": "m",
            },  # fmt: skip
            environ={},
            dotenv=None,
        )


def test_the_teachers_model_and_sampling_shape_records_and_its_operations_do_not(tmp_path):
    demos = tmp_path / "demos.jsonl"
    write_records(demos, [episode(0)])
    teacher = {"base_url": "http://127.0.0.1:9/v1", "model_name": "m"}

    def settings(**changes):
        config = AnnotateConfig(env="textcraft", demos=demos, teacher={**teacher, **changes})
        return config.record_settings()

    assert settings() == settings(base_url="http://other/v1", concurrency=1, max_retries=0)
    assert settings(model_name="m2")["teacher"]["model_name"] == "m2"
    assert settings(temperature=0.7) != settings()
    before = settings()
    write_records(demos, [episode(1)])
    assert settings()["inputs"] != before["inputs"]
