"""babyai-putnext: one room, fully observed, an expert that plans from the whole grid."""

from __future__ import annotations

import pytest

from agentcli.envs.babyai import PUT_NEXT_SPEC
from agentcli.envs.babyai.levels import PUT_NEXT, PUT_NEXT_ROOM
from agentcli.envs.registry import get_spec


@pytest.fixture(scope="module")
def environment():
    return PUT_NEXT_SPEC.load()


@pytest.fixture
def session(environment):
    session = environment.open_session()
    yield session
    session.close()


def _grid_objects(index: int) -> list[str]:
    import gymnasium

    env = gymnasium.make(PUT_NEXT).unwrapped
    env.reset(seed=index)
    grid = env.grid
    objects = (grid.get(x, y) for x in range(grid.width) for y in range(grid.height))
    return sorted(f"{obj.color} {obj.type}" for obj in objects if obj and obj.type != "wall")


def test_registered_with_its_own_items(environment):
    assert get_spec("babyai-putnext") is PUT_NEXT_SPEC
    assert PUT_NEXT_ROOM.level_of(1234) == (PUT_NEXT, 1234)
    splits = environment.splits()
    assert splits["test"][:2] == [0, 1] and splits["train"][0] == 1000
    assert not set(splits["train"]) & set(splits["test"])


@pytest.mark.parametrize("index", [0, 7, 1000, 1001])
def test_every_object_of_the_room_is_listed_once(session, index):
    """In view (numbered) or out of sight (with where it is): nothing is hidden."""
    transition = session.reset(index)
    while True:
        listed = [
            line.removeprefix("- ").split(":")[0].rstrip(" 0123456789")
            for line in transition.observation.splitlines()
            if line.startswith("- ")
        ]
        assert sorted(listed) == _grid_objects(index) or session._env.carrying is not None
        if transition.done:
            break
        transition = session.step(session.expert_action())
    assert transition.success


def test_out_of_sight_says_behind(session):
    observation = session.reset(1000).observation
    assert "Out of sight:\n- purple key: 1 step behind and 3 steps to your right" in observation


def test_expert_solves_the_level_in_a_few_actions(session):
    rounds = []
    for index in range(1000, 1040):
        transition, count = session.reset(index), 0
        while not transition.done:
            transition = session.step(session.expert_action())
            count += 1
        assert transition.success, index
        rounds.append(count)
    assert sum(rounds) / len(rounds) < 7


def test_reasons_name_objects_out_of_sight(session):
    """With the room in view, a reason can point the way to what the agent cannot see."""
    session.reset(1000)
    session.step("pick up purple box 1")
    assert "- purple key: 3 steps behind" in session.step("turn left").observation
    reason = session.explain("turn right")
    assert "The purple key is 3 steps behind and 3 steps to my right; I turn right" in reason


def test_the_last_two_actions_close_every_observation(session):
    assert session.reset(1000).observation.endswith("Your last actions: none")
    session.step("turn left")
    refused = session.step("Fly  away")  # refused actions count: the agent wrote them
    assert refused.observation.endswith("Your last actions: turn left, Fly away")
    moved = session.step("turn right")
    assert moved.observation.endswith("Your last actions: Fly away, turn right")
