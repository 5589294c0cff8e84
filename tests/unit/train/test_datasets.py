"""Training files: every accepted shape read into records, every problem one line with its line."""

from __future__ import annotations

import json
import re

import pytest

from agentcli.conversation import ACKNOWLEDGEMENT
from agentcli.errors import UsageError
from agentcli.train.datasets import DataFormatError, load_chat_records, load_preference_records

AGENTGYM_RECORD = {
    "item_id": "textcraft_7",
    "conversations": [
        {"from": "human", "loss": None, "value": "Craft a stick."},
        {"from": "gpt", "loss": False, "value": ACKNOWLEDGEMENT},
        {"from": "human", "loss": None, "value": "Crafting commands: ..."},
        {"from": "gpt", "loss": True, "value": "Thought: planks first.\nAction: get 1 oak log"},
    ],
}


def write_lines(path, *values):
    path.write_text("".join((v if isinstance(v, str) else json.dumps(v)) + "\n" for v in values))
    return path


def test_agentgym_json_becomes_chat_records_with_its_loss_flags(tmp_path):
    path = tmp_path / "agenttraj.json"
    # As AgentGym writes it, with the keys its evaluator adds.
    path.write_text(
        json.dumps(
            [
                AGENTGYM_RECORD,
                {**AGENTGYM_RECORD, "item_id": "textcraft_8", "reward": 1.0, "success": 1},
            ],
            indent=4,
        )
    )

    first, second = load_chat_records(path)

    assert first.item_id == "textcraft_7" and second.item_id == "textcraft_8"
    assert [(m.role, m.loss) for m in first.messages] == [
        ("user", None),
        ("assistant", False),
        ("user", None),
        ("assistant", True),
    ]
    assert [m.content for m in first.messages] == [
        t["value"] for t in AGENTGYM_RECORD["conversations"]
    ]


def test_jsonl_mixes_chat_records_and_prompt_response_pairs(tmp_path):
    chat = {
        "item_id": "alfworld_3",
        "messages": [
            {"role": "system", "content": "You are an agent."},
            {"role": "user", "content": "Put a mug in the sink."},
            {"role": "assistant", "content": "Thought: ...\nAction: go to sink 1"},
        ],
    }
    pair = {"prompt": "Goal and history ...", "response": "Thought: ...\nAction: look"}
    path = write_lines(
        tmp_path / "sft.jsonl", chat, "", pair, {**AGENTGYM_RECORD, "item_id": "textcraft_1"}
    )

    records = load_chat_records(path)

    assert [r.item_id for r in records] == ["alfworld_3", "line_3", "textcraft_1"]
    assert records[0].messages[2].loss is None  # the trainer's default: an assistant is trained
    assert [(m.role, m.content, m.loss) for m in records[1].messages] == [
        ("user", pair["prompt"], None),
        ("assistant", pair["response"], True),
    ]


def one_line_error(load, path) -> str:
    with pytest.raises(DataFormatError) as caught:
        load(path)
    message = str(caught.value)
    assert "\n" not in message and isinstance(caught.value, UsageError)  # exit 2 through the CLI
    assert re.fullmatch(rf"{re.escape(str(path))}:\d+: .+ — .+", message), message
    return message


def test_a_bad_json_line_names_its_line(tmp_path):
    path = write_lines(tmp_path / "sft.jsonl", {"prompt": "a", "response": "b"}, '{"prompt": "a",')
    assert one_line_error(load_chat_records, path).startswith(f"{path}:2: not valid JSON")


def test_an_empty_file_is_refused(tmp_path):
    path = tmp_path / "sft.jsonl"
    path.write_text("\n")
    assert one_line_error(load_chat_records, path).startswith(f"{path}:1: the file is empty")
    assert one_line_error(load_preference_records, path).startswith(f"{path}:1: the file is empty")


def test_a_bad_json_list_names_the_line(tmp_path):
    path = tmp_path / "agenttraj.json"
    path.write_text('[\n  {"item_id": "textcraft_1",\n   "conversations": []}\n  {"item_id": 2}\n]')
    assert one_line_error(load_chat_records, path).startswith(f"{path}:4: not valid JSON")


def test_a_record_without_conversations_names_the_line_it_starts_on(tmp_path):
    path = tmp_path / "agenttraj.json"
    path.write_text(
        json.dumps([AGENTGYM_RECORD, {"item_id": "textcraft_9", "turns": []}], indent=4)
    )
    start = path.read_text().split("\n").index("    {", 2) + 1  # the second record's line
    message = one_line_error(load_chat_records, path)
    assert message.startswith(f"{path}:{start}: the record has no 'conversations'")


def test_an_item_with_an_empty_conversation_has_no_trainable_tokens(tmp_path):
    path = write_lines(tmp_path / "bc.jsonl", {"item_id": "textcraft_4", "conversations": []})
    assert one_line_error(load_chat_records, path).startswith(
        f"{path}:1: textcraft_4 has no trainable tokens"
    )


def test_a_record_with_no_trainable_tokens_is_refused(tmp_path):
    untrained = json.loads(json.dumps(AGENTGYM_RECORD))
    untrained["conversations"][3]["loss"] = False
    path = write_lines(tmp_path / "bc.jsonl", AGENTGYM_RECORD, untrained)
    message = one_line_error(load_chat_records, path)
    assert message.startswith(f"{path}:2: textcraft_7 has no trainable tokens")


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        (
            {"item_id": "textcraft_1", "conversations": [{"from": "bot", "value": "x"}]},
            "unknown speaker 'bot'",
        ),
        ({"messages": [{"role": "tool", "content": "x"}]}, "messages.0.role"),
        (
            {"messages": [{"role": "user", "content": "x", "loss": True}]},
            "only assistant messages are trained",
        ),
        ({"prompt": "a", "response": "b", "score": 1}, "unknown key 'score'"),
        ({"item_id": "not an id", "prompt": "a", "response": "b"}, "item_id"),
    ],
)
def test_malformed_records_say_what_is_wrong(tmp_path, record, problem):
    path = write_lines(tmp_path / "sft.jsonl", {"prompt": "a", "response": "b"}, record)
    message = one_line_error(load_chat_records, path)
    assert message.startswith(f"{path}:2: ") and problem in message


def test_preference_records_as_text_or_messages(tmp_path):
    turn = [{"role": "user", "content": "Goal ..."}]
    path = write_lines(
        tmp_path / "dpo.jsonl",
        {
            "item_id": "textcraft_2",
            "prompt": "Goal ...",
            "chosen": "Action: a",
            "rejected": "Action: b",
        },
        {
            "prompt": turn,
            "chosen": [{"role": "assistant", "content": "Action: a"}],
            "rejected": [{"role": "assistant", "content": "Action: b"}],
        },
    )
    text, messages = load_preference_records(path)
    assert (text.item_id, text.chosen) == ("textcraft_2", "Action: a")
    assert messages.item_id == "line_2" and messages.rejected[0].content == "Action: b"

    write_lines(path, {"prompt": "Goal ...", "chosen": "Action: a", "rejected": turn})
    assert "all be text or all be messages" in one_line_error(load_preference_records, path)
