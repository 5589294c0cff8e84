"""Training refuses, in one line and before anything is written to --out, data that cannot
train: an empty file, every conversation dropped, episodes instead of training records, or
items of another env than --task."""

from __future__ import annotations

import json

import pytest

from agentcli.errors import DataFormatError, UsageError
from agentcli.records import ChatMessage, ChatRecord
from agentcli.train.config import TrainConfig
from agentcli.train.launch import check_before_start
from agentcli.train.tokenize import tokenize_records


def _config(tmp_path, data, **fields) -> TrainConfig:
    path = tmp_path / "data.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return TrainConfig(method="bc", data=path, model=tmp_path / "model", out=tmp_path / "out",
                       **fields)  # fmt: skip


def _conversation(item_id: str) -> dict:
    turns = [("human", None, "Craft a stick."), ("gpt", True, "Action: get 1 oak log")]
    return {
        "item_id": item_id,
        "conversations": [{"from": who, "loss": loss, "value": text} for who, loss, text in turns],
    }


@pytest.fixture
def model_dir(tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")


def test_an_empty_data_file_is_one_line_and_nothing_is_written(tmp_path, model_dir):
    config = _config(tmp_path, [])
    with pytest.raises(DataFormatError, match="holds no record to train on"):
        check_before_start(config)
    assert not config.out.exists()


def test_episodes_are_pointed_to_build_data_and_data_convert(tmp_path, model_dir):
    episode = {"item_id": "textcraft_0", "env": "textcraft", "instruction": "i", "steps": []}
    config = _config(tmp_path, json.dumps(episode) + "\n")
    with pytest.raises(DataFormatError, match="agentgym build-data.*agentgym data convert"):
        check_before_start(config)


def test_items_of_another_env_than_the_task_are_refused(tmp_path, model_dir):
    config = _config(tmp_path, [_conversation("webshop_3")], env="textcraft")
    with pytest.raises(UsageError, match="holds webshop items, not textcraft: pass --task webshop"):
        check_before_start(config)
    check_before_start(_config(tmp_path, [_conversation("textcraft_3")], env="textcraft"))


def test_every_conversation_dropped_is_one_line(tiny_model):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    record = ChatRecord(item_id="textcraft_0", messages=[
        ChatMessage(role="user", content="Craft a stick. " * 20),
        ChatMessage(role="assistant", content="Action: get 1 oak log", loss=True),
    ])  # fmt: skip
    with pytest.raises(DataFormatError, match="every conversation was dropped.*--overflow"):
        tokenize_records(tokenizer, [record], max_length=16, overflow="drop")
