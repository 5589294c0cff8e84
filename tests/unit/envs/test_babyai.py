"""babyai over the real minigrid package, in-process."""

from __future__ import annotations

import json
import random

import pytest

from agentcli.envs.babyai import SPEC
from agentcli.envs.babyai.levels import AGENTGYM_LEVELS, LEVELS
from agentcli.envs.wire.format import DEFAULT_WIRE
from agentcli.errors import TaskNotFoundError

# Seed 0 of 20 levels: every kind of mission (go to, open, pick up, put next, unlock, sequences,
# boss) and both of the expert's own recoveries (22 starts carrying, 25 hides the key in a box).
# Level 16 (OpenDoorsOrderN4Debug) is left out: minigrid's strict verifier fails every "open A,
# then open B" mission the moment A opens, so two in three of its tasks cannot be solved.
EXPERT_ITEMS = (0, 3, 5, 7, 9, 11, 12, 14, 17, 19, 20, 21, 22, 24, 25, 27, 29, 32, 34, 37)
EXPERT_ROUND_CAP = 150  # exploring long levels takes more than max_rounds; see the docs


@pytest.fixture(scope="module")
def environment():
    return SPEC.load()


@pytest.fixture
def session(environment):
    session = environment.open_session("native")
    yield session
    session.close()


def _finish_with_expert(session, transition):
    rounds = 0
    while not transition.done and rounds < EXPERT_ROUND_CAP:
        action = session.expert_action()
        assert action in transition.available_actions
        transition = session.step(action)
        rounds += 1
    return transition


@pytest.mark.parametrize("index", EXPERT_ITEMS)
def test_expert_completes_the_mission(session, index):
    transition = _finish_with_expert(session, session.reset(index))
    assert transition.done and transition.success, AGENTGYM_LEVELS.category(index)
    assert 0 < transition.score <= 1 and transition.reward == transition.score
    assert session.expert_action() is None


def test_simple_missions_take_a_round_or_two(session):
    """The expert folds the bot's steps into "go to" / "pick up" actions where they match."""
    for index in (0, 3, 12, 18):  # go to, go to, open a door, pick up
        transition = session.reset(index)
        actions = [session.expert_action()]
        transition = session.step(actions[0])
        if not transition.done:
            actions.append(session.expert_action())
            transition = session.step(actions[1])
        assert transition.success, (index, actions)


def test_expert_recovers_after_student_detours(session):
    for index in (11, 21, 25, 28):
        chooser = random.Random(index)
        transition = session.reset(index)
        for _ in range(6):
            transition = session.step(chooser.choice(transition.available_actions))
        assert _finish_with_expert(session, transition).success, AGENTGYM_LEVELS.category(index)


def test_items_map_to_agentgym_levels_and_seeds():
    assert len(LEVELS) == 40
    assert AGENTGYM_LEVELS.level_of(0) == ("BabyAI-GoToRedBallGrey-v0", 0)
    assert AGENTGYM_LEVELS.level_of(41) == ("BabyAI-GoToRedBall-v0", 1)
    assert AGENTGYM_LEVELS.level_of(79) == ("BabyAI-BossLevelNoUnlock-v0", 1)
    assert AGENTGYM_LEVELS.category(3) == AGENTGYM_LEVELS.category(43) == "GoToObjS6"
    with pytest.raises(TaskNotFoundError):
        AGENTGYM_LEVELS.level_of(-1)


def test_every_level_is_registered_by_minigrid(environment):
    import gymnasium

    assert all(level in gymnasium.registry for level in LEVELS)


def test_spec_matches_its_wire_format_and_needs_nothing_more():
    assert SPEC.wire is DEFAULT_WIRE and SPEC.max_rounds == 20
    assert SPEC.missing() is None
    assert "Thought:" in SPEC.instruction and "toggle and go through" in SPEC.instruction


def test_splits_are_disjoint_sorted_and_stable(environment):
    splits = environment.splits()
    assert splits == environment.splits()
    assert not set(splits["train"]) & set(splits["test"])
    for ids in splits.values():
        assert ids == sorted(ids) and ids[0] >= 0
    category = AGENTGYM_LEVELS.category
    assert {category(i) for i in splits["test"]} == {category(i) for i in range(40)}


def test_bad_actions_are_observations_that_change_nothing(session):
    start = session.reset(0)
    scene = start.observation.split("\n", 1)[1]
    for action in ("", "   ", "fly to the moon", "go to purple unicorn 9", "drop", "x" * 2000):
        transition = session.step(action)
        assert not transition.done and transition.reward == 0
        assert transition.observation.endswith(scene)
        assert transition.available_actions == start.available_actions
    assert "not carrying anything" in session.step("drop").observation
    with pytest.raises(TaskNotFoundError):
        session.reset(-3)


def test_steps_outside_an_episode_do_not_crash(environment):
    session = environment.open_session("native")
    assert "reset first" in session.step("turn left").observation
    assert session.expert_action() is None
    session.reset(0)
    done = session.step("go to red ball 1")
    assert done.success
    after = session.step("turn left")
    assert after.done and after.success and "over" in after.observation


def test_actions_are_read_leniently(session):
    session.reset(0)
    assert "You picked up the grey key." in session.step("PICKUP grey key").observation
    session.reset(0)
    assert session.step('Go To "Red Ball 1".').success


def test_view_lists_every_visible_object(session):
    import gymnasium

    env = gymnasium.make(LEVELS[0]).unwrapped
    env.reset(seed=0)
    grid, visible = env.gen_obs_grid()
    seen = [
        f"{grid.get(i, j).color} {grid.get(i, j).type}"
        for i in range(grid.width)
        for j in range(grid.height)
        if visible[i, j] and grid.get(i, j) is not None and grid.get(i, j).type != "wall"
    ]
    observation = session.reset(0).observation
    listed = [line for line in observation.splitlines() if line.startswith("- ")]
    assert len(listed) == len(seen) > 1
    for name in set(seen):
        assert sum(line.startswith(f"- {name} ") for line in listed) == seen.count(name)
    assert "red ball 1: 4 steps ahead and 3 steps to your right" in observation
    assert "You are carrying nothing." in observation
    for action in session.reset(0).available_actions:
        assert json.dumps(action) in observation


def test_view_tells_doors_and_what_is_carried(session):
    transition = session.reset(25)  # KeyInBox: a locked door, its key inside a box
    observations, offered = [transition.observation], set(transition.available_actions)
    while not transition.done:
        transition = session.step(session.expert_action())
        observations.append(transition.observation)
        offered.update(transition.available_actions)
    text = "\n".join(observations)
    assert "found a purple key" in text and "You are carrying a purple key." in text
    assert "purple locked door 1" in text
    assert "toggle and go through purple locked door 1" in offered


def test_privileged_state_shows_the_whole_layout(environment):
    text = environment.privileged_state(25)
    assert "Mission: open the door" in text
    assert "purple locked door at" in text and "containing a purple key" in text
    assert text.count("\n#") >= 10  # map rows
    assert environment.privileged_state(25) == text


def test_asking_the_expert_changes_nothing(environment):
    """Advice asked at every step equals advice asked once after the same actions, also after
    the bot fails and restarts (these random detours make it fail on item 86)."""
    asked, unasked = environment.open_session("native"), environment.open_session("native")
    differing = []
    for index in range(80, 120, 2):
        chooser = random.Random(index)
        transition = asked.reset(index)
        unasked.reset(index)
        for t in range(20):
            if transition.done:
                break
            asked.expert_action()
            action = chooser.choice(transition.available_actions)
            transition = asked.step(action)
            unasked.step(action)
            if t % 4 == 3 and asked.expert_action() != unasked.expert_action():
                differing.append((index, t))
    assert differing == []


def test_reasons_say_where_the_target_is_from_the_agent(session):
    session.reset(0)  # GoToRedBallGrey, seed 0: "red ball 1: 4 steps ahead and 3 to the right"
    action = session.expert_action()
    assert action == "go to red ball 1"
    assert session.explain(action) == (
        "My mission: go to the red ball. The red ball 1 is 4 steps ahead and 3 steps to my "
        "right, so I go to it."
    )
    assert session.explain("turn left") == (
        "My mission: go to the red ball. The red ball 1 is 4 steps ahead and 3 steps to my "
        "right; I turn left to work my way towards it."
    )
    session.step("turn left")
    session.step("turn left")  # facing away: nothing in view names the red ball
    assert session.explain("move forward") == (
        "My mission: go to the red ball. Nothing my mission needs is in view, so I move "
        "forward to look for it."
    )
