"""JSONL files survive a killed writer: torn last lines, resumes, atomic rewrites."""

from __future__ import annotations

import logging

import pytest

from agentcli.common import write_atomic
from agentcli.data.jsonl import append_records, done_ids, read_records, repair_tail, write_records
from agentcli.errors import UsageError
from agentcli.records import Episode, PrivilegedState, Step


def _states(*indices: int) -> list[PrivilegedState]:
    return [PrivilegedState(item_id=f"textcraft_{i}", text=f"plan → {i}") for i in indices]


def _half_a_record(path, index: int) -> None:
    """What a writer killed in the middle of ``write`` leaves behind."""
    line = PrivilegedState(item_id=f"textcraft_{index}", text="x" * 50).model_dump_json()
    with path.open("ab") as file:
        file.write(line[: len(line) // 2].encode())


def test_append_then_read_round_trips(tmp_path):
    path = tmp_path / "deep" / "states.jsonl"
    assert append_records(path, _states(0, 1)) == 2
    append_records(path, _states(2), fsync=True)
    assert read_records(path, PrivilegedState) == _states(0, 1, 2)
    assert done_ids(path) == {"textcraft_0", "textcraft_1", "textcraft_2"}


def test_episode_lines_hold_every_field(tmp_path):
    path = tmp_path / "episodes.jsonl"
    step = Step(observation="o\u2028still one line", action="inventory", candidate_actions=["a"])
    episode = Episode(
        item_id="textcraft_4", env="textcraft", split="train", instruction="Craft.", steps=[step],
        reward=1.0, success=True, n_steps=1, meta={"policy": "oracle", "end_reason": "done"},
    )  # fmt: skip
    append_records(path, [episode])
    assert path.read_bytes().count(b"\n") == 1
    assert read_records(path, Episode) == [episode]


def test_torn_last_line_is_dropped_with_a_warning(tmp_path, caplog):
    path = tmp_path / "states.jsonl"
    append_records(path, _states(0, 1))
    _half_a_record(path, 2)
    with caplog.at_level(logging.WARNING):
        assert read_records(path, PrivilegedState) == _states(0, 1)
    assert "line 3" in caplog.text and "unfinished" in caplog.text
    assert done_ids(path) == {"textcraft_0", "textcraft_1"}


def test_torn_multibyte_character_is_dropped_too(tmp_path):
    path = tmp_path / "states.jsonl"
    append_records(path, _states(0))
    with path.open("ab") as file:
        file.write('{"item_id": "textcraft_1", "text": "→'.encode()[:-1])  # half of "→"
    assert read_records(path, PrivilegedState) == _states(0)


def test_resume_after_a_torn_line_appends_cleanly(tmp_path, caplog):
    path = tmp_path / "states.jsonl"
    append_records(path, _states(0, 1))
    _half_a_record(path, 2)
    with caplog.at_level(logging.WARNING):
        append_records(path, _states(2, 3))  # the rerun redoes item 2
    assert "cut off an unfinished last line" in caplog.text
    assert read_records(path, PrivilegedState) == _states(0, 1, 2, 3)
    assert path.read_bytes().count(b"\n") == 4


def test_a_whole_last_record_without_newline_is_kept(tmp_path):
    path = tmp_path / "states.jsonl"
    path.write_text(_states(0)[0].model_dump_json())  # e.g. written by hand
    assert read_records(path, PrivilegedState) == _states(0)
    assert repair_tail(path) is True
    append_records(path, _states(1))
    assert read_records(path, PrivilegedState) == _states(0, 1)
    assert repair_tail(path) is False


def test_corrupt_line_in_the_middle_is_an_error_naming_it(tmp_path):
    path = tmp_path / "states.jsonl"
    append_records(path, _states(0))
    _half_a_record(path, 1)
    with path.open("ab") as file:
        file.write(b"\n")
    append_records(path, _states(2))
    for read in (lambda: read_records(path, PrivilegedState), lambda: done_ids(path)):
        with pytest.raises(UsageError) as caught:
            read()
        message = str(caught.value)
        assert f"{path} line 2: not valid JSON" in message and "\n" not in message


def test_invalid_record_names_line_and_field(tmp_path):
    path = tmp_path / "states.jsonl"
    path.write_text('{"item_id": "textcraft_0", "text": "a"}\n{"item_id": "textcraft_1"}\n')
    with pytest.raises(UsageError, match=r"line 2: not a valid PrivilegedState record \(text:"):
        read_records(path, PrivilegedState)


def test_blank_lines_are_skipped_and_missing_file_has_no_ids(tmp_path):
    path = tmp_path / "states.jsonl"
    path.write_text('\n{"item_id": "textcraft_0", "text": "a"}\n\n')
    assert read_records(path, PrivilegedState) == [PrivilegedState(item_id="textcraft_0", text="a")]
    assert done_ids(tmp_path / "absent.jsonl") == set()


def test_atomic_writes_replace_and_leave_no_temporary_files(tmp_path):
    path = tmp_path / "out" / "file.json"
    write_atomic(path, "old")
    write_atomic(path, "new →")
    assert path.read_text(encoding="utf-8") == "new →"
    write_records(tmp_path / "out" / "states.jsonl", _states(0, 1))
    assert read_records(tmp_path / "out" / "states.jsonl", PrivilegedState) == _states(0, 1)
    assert sorted(p.name for p in path.parent.iterdir()) == ["file.json", "states.jsonl"]
