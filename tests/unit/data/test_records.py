"""Record models: item ids, episode consistency."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentcli.errors import UsageError
from agentcli.records import (
    ChatMessage,
    Episode,
    PreferenceRecord,
    item_id,
    parse_item_id,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("textcraft_12", ("textcraft", 12)), ("lmrlgym_maze_0", ("lmrlgym_maze", 0))],
)
def test_parse_item_id(text, expected):
    assert parse_item_id(text) == expected
    assert item_id(*expected) == text


@pytest.mark.parametrize(
    "text",
    ["textcraft", "textcraft_", "_3", "12", "textcraft_-1", "textcraft_01", "textcraft_1.5",
     "textcraft_١", "textcraft 3", ""],
)  # fmt: skip
def test_malformed_item_id_is_one_clear_line(text):
    with pytest.raises(UsageError) as caught:
        parse_item_id(text)
    message = str(caught.value)
    assert repr(text) in message and "<env>_<index>" in message and "\n" not in message


def test_item_id_refuses_what_would_not_read_back():
    with pytest.raises(UsageError):
        item_id("textcraft", -1)


def _episode(**fields):
    step = {"observation": "Goal: craft stick.", "reason": "need logs", "action": "get 1 oak log"}
    base = {"item_id": "textcraft_3", "env": "textcraft", "instruction": "Craft things."}
    base["steps"] = [step]
    return Episode.model_validate({**base, **fields})


def test_episode_counts_its_steps_and_checks_itself():
    episode = _episode()
    assert episode.n_steps == 1 and episode.index == 3 and episode.split is None
    with pytest.raises(ValidationError, match="n_steps is 2"):
        _episode(n_steps=2)
    with pytest.raises(ValidationError, match="names env 'textcraft' but env is 'babyai'"):
        _episode(env="babyai")
    with pytest.raises(ValidationError, match="expected '<env>_<index>'"):
        _episode(item_id="textcraft-3")
    with pytest.raises(ValidationError, match="Extra inputs"):
        _episode(score=1.0)  # unknown keys are errors, so typos surface


def test_preference_record_parts_are_all_text_or_all_messages():
    PreferenceRecord(item_id="textcraft_1", prompt="p", chosen="c", rejected="r")
    turn = [ChatMessage(role="assistant", content="Thought: x\nAction: y")]
    PreferenceRecord(
        item_id="textcraft_1", prompt=[ChatMessage(role="user", content="p")], chosen=turn,
        rejected=turn,
    )  # fmt: skip
    with pytest.raises(ValidationError, match="all be text or all be messages"):
        PreferenceRecord(item_id="textcraft_1", prompt="p", chosen=turn, rejected="r")
