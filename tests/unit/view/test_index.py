"""The view's index: one pass gives each record's offset and filter fields; a page reads its
records back by offset; filters, the text search and a file that grows."""

from __future__ import annotations

import json

import pytest

from agentcli.data.jsonl import write_records
from agentcli.errors import UsageError
from agentcli.view.index import Filters, Indexes, RecordIndex
from tests.support.view_records import correction, episode, played, write_many_episodes


@pytest.fixture
def episodes_file(tmp_path):
    records = [
        episode(0, success=True, actions=["go to ball 0"]),
        episode(1, actions=["turn left", "turn left", "turn left"]),
        episode(2, success=True, actions=["pick up the red key"]),
        episode(3, actions=["move forward"], end_reason="error"),
        episode(41, actions=["drop"]),
    ]
    path = tmp_path / "episodes.jsonl"
    write_records(path, records)
    return path, records


def test_each_record_reads_back_by_its_offset_as_its_line(episodes_file):
    path, records = episodes_file
    index = RecordIndex(path)
    lines = path.read_bytes().splitlines()
    assert len(index) == len(records) and index.kind == "episodes"
    assert [index.raw(row) for row in range(len(index))] == lines
    assert index.record(3)["item_id"] == "babyai_3"
    assert [row for row, _ in index.records([1, 4])] == [1, 4]
    assert list(index.steps) == [1, 3, 1, 1, 1]
    assert [index.end_reasons[row] for row in range(5)] == ["done", "max_rounds", "done",
                                                             "error", "max_rounds"]  # fmt: skip
    with pytest.raises(UsageError, match="has no record 5"):
        index.raw(5)


def test_blank_lines_are_skipped_and_a_torn_last_line_is_not_a_record_yet(episodes_file):
    path, records = episodes_file
    text = path.read_text().replace("\n", "\n\n", 1)
    path.write_text(text + records[0].model_dump_json()[:40])  # a writer stopped mid-record
    index = RecordIndex(path)
    assert len(index) == len(records)
    assert json.loads(index.raw(1))["item_id"] == "babyai_1"


def test_a_bad_line_in_the_middle_is_an_error_naming_it(episodes_file):
    path, _ = episodes_file
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:2] + ["{not json\n"] + lines[2:]))
    with pytest.raises(UsageError, match=r"episodes.jsonl line 3: not valid JSON"):
        RecordIndex(path)


def test_a_file_of_other_records_is_refused(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps({"item_id": "babyai_1", "messages": []}) + "\n")
    with pytest.raises(UsageError, match="line 1: not an Episode, a Correction or a Privileged"):
        RecordIndex(path)
    good = episode(1).model_dump_json()
    path.write_text(good + "\n" + json.dumps({"item_id": "babyai_2", "text": "x"}) + "\n")
    with pytest.raises(UsageError, match=r"line 2: not a record like those before it \(episodes"):
        RecordIndex(path)


def test_filters_by_success_end_reason_category_and_item(episodes_file):
    path, _ = episodes_file
    index = RecordIndex(path)
    assert index.matching(Filters()) == [0, 1, 2, 3, 4]
    assert index.matching(Filters(success=False)) == [1, 3, 4]
    assert index.matching(Filters(success=False, end_reason="max_rounds")) == [1, 4]
    assert index.matching(Filters(end_reason="context_exceeded")) == []
    assert index.matching(Filters(item="_4")) == [4]
    category = index.categories[1]  # babyai's items have a level each
    assert category and index.matching(Filters(category=category)) == [
        row for row in range(5) if index.categories[row] == category
    ]
    assert dict(index.categories.counts())[category] >= 1


def test_filters_the_episodes_that_ran_out_of_rounds_in_a_loop(tmp_path):
    at_wall, at_door = ("a wall ahead", "pick up ball"), ("a door ahead", "turn left")
    records = [
        played(0, [at_door, at_wall, at_wall]),  # stuck: an action that changed nothing
        played(1, [at_wall, at_door, at_wall]),  # a loop of two steps
        played(2, [at_wall, at_door]),  # out of rounds, in no loop
        played(3, [at_wall, at_wall], end_reason="done"),  # it ended before the limit
        episode(4, actions=["move forward"], end_reason="error"),
    ]
    path = tmp_path / "episodes.jsonl"
    write_records(path, records)
    index = RecordIndex(path)
    assert list(index.loop_periods) == [1, 2, 0, 0, 0]
    assert index.matching(Filters(loop="looped")) == [0, 1]
    assert index.matching(Filters(loop="stuck")) == [0]
    assert index.matching(Filters(loop="looped", end_reason="done")) == []
    assert index.loop_counts() == [("looped", 2), ("stuck", 1)]
    write_records(path, records[2:])
    assert Indexes().get(path).loop_counts() == []  # no choice to offer where none looped


def test_the_text_search_looks_in_values_ignoring_case_not_in_keys(episodes_file):
    path, _ = episodes_file
    index = RecordIndex(path)
    assert index.matching(Filters(text="RED KEY")) == [2]
    assert index.matching(Filters(text="observation")) == []  # a key of every record
    assert index.matching(Filters(text="turn left\nturn")) == []  # no one value holds it
    assert index.matching(Filters(text='"')) == []
    assert index.matching(Filters(text="ball 4")) == [4]  # "go to the ball 41"
    assert index.matching(Filters(text="goal", success=True)) == [0, 2]


def test_corrected_filters_a_rollout_through_its_corrections(tmp_path, episodes_file):
    path, records = episodes_file
    corrections = tmp_path / "corrections.jsonl"
    write_records(corrections, [correction(records[1], {1: "move forward", 2: "drop"}),
                                correction(records[3], {})])  # fmt: skip
    corrected = RecordIndex(corrections)
    assert corrected.kind == "corrections"
    assert list(corrected.changed) == [2, 0] and list(corrected.first_change) == [1, -1]
    index = RecordIndex(path)
    assert index.matching(Filters(corrected=True), corrected) == [1]
    assert index.matching(Filters(corrected=False), corrected) == [0, 2, 3, 4]
    assert corrected.matching(Filters(corrected=True)) == [0]


def test_the_last_record_of_an_item_is_the_one_found(tmp_path):
    path = tmp_path / "episodes.jsonl"
    write_records(path, [episode(5), episode(6), episode(5, success=True)])
    index = RecordIndex(path)
    assert index.row_of("babyai_5") == 2 and index.row_of("babyai_9") is None


def test_a_grown_file_is_indexed_again(tmp_path, episodes_file):
    path, _ = episodes_file
    indexes = Indexes()
    first = indexes.get(path)
    assert indexes.get(path) is first
    with path.open("a") as file:
        file.write(episode(7).model_dump_json() + "\n")
    again = indexes.get(path)
    assert again is not first and len(again) == len(first) + 1


def test_the_bench_file_has_a_third_won_and_distinct_items(tmp_path):
    path = tmp_path / "many.jsonl"
    write_many_episodes(path, 3000)
    index = RecordIndex(path)
    assert len(index) == 3000 and sum(index.success) == 1000
    assert len(set(index.item_ids)) == 3000 and index.record(2999)["item_id"] == "babyai_2999"


def test_a_column_of_many_values_still_filters_by_one():
    from agentcli.view.index import Codes

    column = Codes()
    for row in range(600):
        column.append(f"level-{row % 300}" if row % 7 else None)
    assert column.rows.typecode == "I"  # past 256 values: four bytes a row
    assert column.mask("level-5") == bytes(int(row % 300 == 5 and row % 7 != 0)
                                           for row in range(600))  # fmt: skip
    assert column.mask("level-999") == bytes(600)
    assert column[8] == "level-8" and column[7] is None
