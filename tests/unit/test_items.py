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


def test_a_textcraft_item_can_be_named_by_its_goal(tmp_path):
    """``textcraft/<goal>`` means that goal on every machine (AgentGym's numbers follow
    ``os.listdir``); it reads as our index of the goal, whose task states it."""
    from agentcli.envs.textcraft import SPEC

    path = tmp_path / "items.json"
    ids = ["textcraft/stick", "textcraft/dark_oak_sign", "textcraft_103"]
    path.write_text(json.dumps([{"item_id": item} for item in ids]))
    assert items_from_file(path, "textcraft", SPEC.goal_index) == [103, 203]
    environment = SPEC.load()
    assert environment.task(103).observation.endswith("\n\nGoal: craft stick.")
    assert environment.task(203).observation.endswith("\n\nGoal: craft dark oak sign.")


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("babyai/go_to_the_red_ball", "babyai items cannot be named by goal"),
        ("textcraft/unobtainium", "textcraft has no goal 'unobtainium'"),
    ],
)
def test_a_goal_id_textcraft_lacks_is_refused(tmp_path, item, message):
    from agentcli.envs.registry import get_spec

    path = tmp_path / "items.json"
    path.write_text(json.dumps([{"item_id": item}]))
    env = item.split("/")[0]
    with pytest.raises(UsageError, match=message):
        items_from_file(path, env, get_spec(env).goal_index)


def test_another_envs_goal_id_is_refused_by_its_env_before_its_goal_is_looked_up(tmp_path):
    path = tmp_path / "items.json"
    path.write_text(json.dumps([{"item_id": "textcraft/unobtainium"}]))
    with pytest.raises(UsageError, match="not a babyai item; pass --env textcraft"):
        items_from_file(path, "babyai")  # babyai has no goal ids: its lookup would refuse too


def test_task_types_are_chosen_before_skip_and_limit_and_read_only_as_far_as_needed():
    looked_up = []

    def parity(item: int) -> str:
        looked_up.append(item)
        return "even" if item % 2 == 0 else "odd"

    chosen = ItemSelection(task_types=["odd"], skip=1, limit=2).window(
        "alfworld", range(10**6), parity
    )
    assert chosen == [3, 5] and looked_up == list(range(6))  # a split of 10,000 is not sorted
    assert ItemSelection(task_types=["odd", "even"], limit=3).window("x", range(9), parity) == [
        0,
        1,
        2,
    ]


def test_task_types_that_no_item_has_or_an_env_without_types_are_refused():
    with pytest.raises(UsageError, match="no item of task type pick_and_plaec after the first 0"):
        ItemSelection(task_types=["pick_and_plaec"]).window("alfworld", range(5), str)
    with pytest.raises(UsageError, match="textcraft's items have no task types: drop task_types"):
        ItemSelection(task_types=["craft"]).window("textcraft", range(5))
