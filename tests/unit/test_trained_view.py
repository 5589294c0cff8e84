"""A model keeps the view it learned under: build-data writes it beside the records, training
copies it into the model, and rollout, eval and grpo show the model that view unless told
otherwise (a different setting is refused without --other-view)."""

from __future__ import annotations

import json

import pytest

from agentcli.config import validate_config
from agentcli.conversation import StudentView
from agentcli.data.build import write_training_set
from agentcli.errors import ConfigError, UsageError
from agentcli.records import ChatMessage, ChatRecord
from agentcli.rollout import EvalConfig
from agentcli.train.config import TrainConfig
from agentcli.train.launch import refuse_another_view
from agentcli.trained_view import (
    data_view_path,
    model_view_path,
    read_view,
    view_for,
    write_view,
)

WINDOWED = StudentView(history_steps=0, instruction=False, reasons=False, prompt="native")


def test_explicit_settings_go_over_the_learned_view_and_a_different_one_is_refused():
    assert view_for(StudentView(), WINDOWED, of="m") == WINDOWED  # nothing set: its own view
    assert view_for(StudentView(prompt="native"), WINDOWED, of="m") == WINDOWED  # the same
    with pytest.raises(ValueError, match=r"view.history_steps: m was trained with history_st"):
        view_for(StudentView(history_steps=3), WINDOWED, of="m")
    shown = view_for(StudentView(history_steps=3), WINDOWED, of="m", other_view=True)
    assert shown == WINDOWED.model_copy(update={"history_steps": 3})
    given = StudentView(reasons=False)
    assert view_for(given, None, of="m") is given  # a model made elsewhere: the view given


def test_a_training_set_keeps_its_view_and_a_broken_view_file_is_one_line(tmp_path):
    data = tmp_path / "data" / "sft.jsonl"
    record = ChatRecord(
        item_id="textcraft_1",
        messages=[
            ChatMessage(role="user", content="o"),
            ChatMessage(role="assistant", content="a"),
        ],
    )
    write_training_set("sft", [record], data, WINDOWED)
    assert data_view_path(data) == tmp_path / "data" / "sft.view.json"
    assert read_view(data_view_path(data)) == WINDOWED
    data_view_path(data).write_text(json.dumps({"history_steps": "many"}))
    with pytest.raises(UsageError, match="sft.view.json is not a student view"):
        read_view(data_view_path(data))


@pytest.fixture
def trained(tmp_path):
    """A model directory that records the windowed view."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    write_view(model_view_path(model), WINDOWED)
    return model


def eval_config(model, **fields) -> EvalConfig:
    return validate_config(
        EvalConfig, {"env": "babyai-putnext", "policy": {"model": model}, **fields}, source="test"
    )


def test_eval_shows_a_model_its_own_view_unless_told_it_means_another(trained):
    assert eval_config(trained).view == WINDOWED
    with pytest.raises(ConfigError, match="view.instruction: .* --other-view"):
        eval_config(trained, view={"instruction": True})
    other = eval_config(trained, view={"instruction": True}, other_view=True)
    assert other.view == WINDOWED.model_copy(update={"instruction": True})
    # the oracle has no model, so no view of its own
    oracle = validate_config(
        EvalConfig, {"env": "babyai-putnext", "policy": {"kind": "oracle"}}, source="test"
    )
    assert oracle.view == StudentView()


def test_grpo_plays_a_model_in_its_view_and_so_refuses_a_windowed_one(trained, tmp_path):
    whole = StudentView(instruction=False, reasons=False, prompt="native")
    write_view(model_view_path(trained), whole)
    config = TrainConfig(
        method="grpo", model=trained, out=tmp_path / "out", grpo={"envs": ["babyai-putnext"]}
    )
    assert config.grpo.view == whole
    write_view(model_view_path(trained), WINDOWED)
    with pytest.raises(ValueError, match="one multi-turn conversation"):
        TrainConfig(
            method="grpo", model=trained, out=tmp_path / "out", grpo={"envs": ["babyai-putnext"]}
        )


def test_training_on_data_of_another_view_than_the_models_is_refused(trained, tmp_path):
    data = tmp_path / "sft.jsonl"
    data.write_text("")
    write_view(data_view_path(data), StudentView())
    config = TrainConfig(method="sft", data=data, model=trained, out=tmp_path / "out")
    with pytest.raises(UsageError, match=r"was trained with view.history_steps=0, but .* None"):
        refuse_another_view(config)
    write_view(data_view_path(data), WINDOWED)
    refuse_another_view(config)  # the same view: it continues
