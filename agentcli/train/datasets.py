"""Training files read into records, checked before any model is loaded.

``load_chat_records`` (bc, sft) reads three shapes of record, from a JSON list (as AgentGym
ships its trajectories) or a JSONL file (one record a line), and the file may mix them:

- AgentGym: ``{"item_id", "conversations": [{"from": "human"|"gpt", "loss", "value"}]}``;
  ``human`` becomes ``user``, ``gpt`` ``assistant``, and the loss flags are kept. Other keys
  of AgentGym's files (``reward``, ``success``) are ignored.
- chat record: ``{"item_id", "messages": [{"role", "content", "loss"}]}`` (``ChatRecord``).
- prompt / response (LEAP's single-prompt format): ``{"item_id"?, "prompt", "response"}``,
  a user prompt and the assistant's response, which is trained.

``load_preference_records`` (dpo) reads ``{"item_id"?, "prompt", "chosen", "rejected"}``,
all three text or all three lists of messages. A record of any kind without ``item_id`` is
named after its line (``line_12``).

Every problem is one line, ``PATH:LINE: what is wrong — how to fix it``; in a JSON list the
line is where the record starts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from agentcli.data.jsonl import first_problem
from agentcli.errors import DataFormatError
from agentcli.records import ChatMessage, ChatRecord, PreferenceRecord

__all__ = ["DataFormatError", "is_trained", "load_chat_records", "load_preference_records"]

_ROLES = {"human": "user", "gpt": "assistant", "system": "system"}  # AgentGym's, and system
_PAIR_KEYS = {"item_id", "prompt", "response"}

ModelT = TypeVar("ModelT", bound=BaseModel)
UNNAMED = "line_"  # the id prefix of records read without an item id


def is_trained(message: ChatMessage) -> bool:
    """Whether a message's tokens are trained: assistant messages unless ``loss`` is false."""
    return message.role == "assistant" and message.loss is not False


def load_chat_records(path: Path) -> list[ChatRecord]:
    """The conversations of a bc/sft data file; each has at least one trained message."""
    records = []
    for line, value in list(_values(path)):  # the whole file parses before records are checked
        where = f"{path}:{line}"
        fields = _chat_fields(value, where, line)
        if fields.get("messages") == []:  # AgentGym's item lists: an item with no conversation
            raise _untrained(where, fields.get("item_id"))
        record = _build(ChatRecord, fields, where)
        _check_losses(record, where)
        records.append(record)
    return _some(records, path)


def load_preference_records(path: Path) -> list[PreferenceRecord]:
    """The ``{prompt, chosen, rejected}`` pairs of a dpo data file."""
    records = []
    for line, value in list(_values(path)):
        where = f"{path}:{line}"
        if not isinstance(value, dict):
            raise DataFormatError(
                f"{where}: expected an object with 'prompt', 'chosen' and 'rejected' — fix the"
                " record"
            )
        records.append(_build(PreferenceRecord, {"item_id": _unnamed(line), **value}, where))
    return _some(records, path)


def named_envs(records: Sequence[ChatRecord | PreferenceRecord]) -> set[str]:
    """The envs the records' item ids name (records read without an id name none)."""
    return {
        record.item_id.rpartition("_")[0]
        for record in records
        if not record.item_id.startswith(UNNAMED)
    }


def _unnamed(line: int) -> str:
    """The id of a record that has none: its line."""
    return f"{UNNAMED}{line}"


def _some(records: list[ModelT], path: Path) -> list[ModelT]:
    if not records:
        raise DataFormatError(f"{path}: holds no record to train on — point at the data to train")
    return records


# --- one record ------------------------------------------------------------------------------


def _chat_fields(value: Any, where: str, line: int) -> dict[str, Any]:
    """The ``ChatRecord`` fields of any accepted shape of record."""
    if not isinstance(value, dict):
        raise DataFormatError(f"{where}: expected an object, found {type(value).__name__} — fix it")
    if "conversations" in value:
        messages = _agentgym_messages(value, where)
        return {"item_id": value.get("item_id", _unnamed(line)), "messages": messages}
    if "messages" in value:
        return {"item_id": _unnamed(line), **value}
    if "prompt" in value and "response" in value:
        unknown = sorted(set(value) - _PAIR_KEYS)
        if unknown:
            raise DataFormatError(
                f"{where}: unknown key {unknown[0]!r} in a prompt/response record — remove it"
            )
        return {
            "item_id": value.get("item_id", _unnamed(line)),
            "messages": [
                {"role": "user", "content": value["prompt"]},
                {"role": "assistant", "content": value["response"], "loss": True},
            ],
        }
    if "steps" in value and "instruction" in value:
        raise DataFormatError(
            f"{where}: an episode (as collect and rollout write them), not a training record —"
            " build training data from episodes with `agentgym build-data`, or convert them"
            " with `agentgym data convert EPISODES.jsonl OUT.json --to agentgym`"
        )
    raise DataFormatError(
        f"{where}: the record has no 'conversations' (AgentGym), 'messages' (chat record) or"
        " 'prompt' and 'response' — give it one of them"
    )


def _agentgym_messages(value: dict[str, Any], where: str) -> list[dict[str, Any]]:
    turns = value["conversations"]
    if not isinstance(turns, list):
        raise DataFormatError(f"{where}: 'conversations' must be a list of turns — fix the record")
    messages = []
    for number, turn in enumerate(turns):
        speaker = turn.get("from") if isinstance(turn, dict) else None
        if speaker not in _ROLES:
            raise DataFormatError(
                f"{where}: conversations.{number}: unknown speaker {speaker!r} — AgentGym turns"
                " are from 'human' or 'gpt'"
            )
        messages.append(
            {"role": _ROLES[speaker], "content": turn.get("value"), "loss": turn.get("loss")}
        )
    return messages


def _check_losses(record: ChatRecord, where: str) -> None:
    for number, message in enumerate(record.messages):
        if message.loss and message.role != "assistant":
            raise DataFormatError(
                f"{where}: message {number} ({message.role}) has loss true, but only assistant"
                " messages are trained — set its loss to null"
            )
    if not any(is_trained(message) for message in record.messages):
        raise _untrained(where, record.item_id)


def _untrained(where: str, name: object) -> DataFormatError:
    return DataFormatError(
        f"{where}: {name} has no trainable tokens (no assistant message with loss true or null)"
        " — mark the turns to learn with loss true, or remove the record"
    )


def _build(model: type[ModelT], fields: dict[str, Any], where: str) -> ModelT:
    try:
        return model.model_validate(fields)
    except ValidationError as error:
        raise DataFormatError(f"{where}: {first_problem(error)} — fix the record") from None


# --- files -----------------------------------------------------------------------------------


def _values(path: Path) -> Iterator[tuple[int, Any]]:
    """(line, parsed record) for each record of a JSON list or a JSONL file, told apart by
    their first character, whatever the file's name."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        line = path.read_bytes()[: error.start].count(b"\n") + 1
        raise DataFormatError(f"{path}:{line}: not UTF-8 text — save the file as UTF-8") from None
    if not text.strip():
        raise DataFormatError(f"{path}:1: the file is empty — point at the data to train on")
    yield from (_json_list if text.lstrip().startswith("[") else _json_lines)(path, text)


def _json_lines(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    # split("\n"), not splitlines(): JSON text may hold U+2028 and the like inside strings.
    for line, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            yield line, json.loads(raw)
        except json.JSONDecodeError as error:
            raise DataFormatError(
                f"{path}:{line}: not valid JSON ({error.msg} at column {error.colno}) — fix or"
                " delete that line"
            ) from None


def _json_list(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """The items of a JSON list, each with the line it starts on (one pass over the text)."""
    decoder = json.JSONDecoder()
    counted, line = 0, 1  # the line of text[counted]

    def line_of(position: int) -> int:
        nonlocal counted, line
        line += text.count("\n", counted, position)
        counted = position
        return line

    try:
        position = _skip_space(text, 0)
        if text[position : position + 1] != "[":
            raise json.JSONDecodeError("expected a JSON list", text, position)
        position = _skip_space(text, position + 1)
        if text[position : position + 1] == "]":
            position += 1
        else:
            while True:
                start = position
                value, position = decoder.raw_decode(text, position)
                yield line_of(start), value
                position = _skip_space(text, position)
                separator = text[position : position + 1]
                if separator not in (",", "]"):
                    raise json.JSONDecodeError("expecting ',' or ']'", text, position)
                position = _skip_space(text, position + 1) if separator == "," else position + 1
                if separator == "]":
                    break
        position = _skip_space(text, position)
        if position < len(text):
            raise json.JSONDecodeError("extra data after the list", text, position)
    except json.JSONDecodeError as error:
        raise DataFormatError(
            f"{path}:{error.lineno}: not valid JSON ({error.msg} at column {error.colno}) — fix"
            " the file"
        ) from None


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position
