"""Which items a stage runs, and the refusal of a selection that leaves none."""

from __future__ import annotations

import json

import pytest

from agentcli.errors import UsageError
from agentcli.items import HeldOutItems, ItemSelection, items_from_file


def test_skip_then_limit_and_the_default_splits():
    assert ItemSelection(skip=2, limit=3).window("babyai", list(range(10))) == [2, 3, 4]
    assert ItemSelection().split == "train" and HeldOutItems().split == "test"


def test_a_selection_that_leaves_no_item_is_refused(tmp_path):
    with pytest.raises(UsageError, match="has 4 items and --skip 4 leaves none"):
        ItemSelection(skip=4).window("babyai", [0, 1, 2, 3])
    empty = tmp_path / "items.json"
    empty.write_text("[]")
    with pytest.raises(UsageError, match="lists no textcraft item"):
        ItemSelection(data=empty).window("textcraft", items_from_file(empty, "textcraft"))


def test_a_file_names_its_env_items_once_each_in_order(tmp_path):
    path = tmp_path / "items.json"
    ids = ["textcraft_3", "textcraft_1", "textcraft_3"]
    path.write_text(json.dumps([{"item_id": item} for item in ids]))
    assert items_from_file(path, "textcraft") == [3, 1]
    with pytest.raises(UsageError, match="pass --env textcraft"):
        items_from_file(path, "babyai")
    with pytest.raises(UsageError, match="no split 'dev'; it has train, test"):
        ItemSelection(split="dev").require_split("babyai", ["train", "test"])
