"""babyai in AgentGym's words (the agentgym style), over the real minigrid package.

AgentGym's own server cannot run here (it pins gymnasium < 1.0 and minigrid < 2.5), so the
expected texts are worked out by hand from its code (agentenv-babyai ``environment.py`` and
``server.py`` at 3ef9235) for scenes laid out cell by cell, and for fixed seeds.
"""

from __future__ import annotations

import pytest
from minigrid.core.world_object import Ball, Box, Key

from agentcli.envs.babyai import SPEC
from agentcli.envs.babyai.agentgym_session import agentgym_goal
from agentcli.envs.babyai.agentgym_text import read_agentgym_view
from agentcli.envs.babyai.levels import generate, new_level

NORTH = 3


@pytest.fixture(scope="module")
def environment():
    return SPEC.load()


@pytest.fixture
def session(environment):
    session = environment.open_session("agentgym")
    yield session
    session.close()


def _scene():
    """An 8x8 room holding a red ball 2 steps ahead of the agent, a grey key 1 ahead and 1 to
    its left, a blue box 2 to its right; the agent at (3, 6) looking north; no mission target."""
    env = new_level("BabyAI-GoToRedBallNoDists-v0")
    generate(env, 0)
    for x in range(1, env.width - 1):
        for y in range(1, env.height - 1):
            env.grid.set(x, y, None)
    env.grid.set(3, 4, Ball("red"))
    env.grid.set(2, 5, Key("grey"))
    env.grid.set(5, 6, Box("blue"))
    env.agent_pos, env.agent_dir = (3, 6), NORTH
    env.instrs.desc.obj_poss = []  # nothing the agent faces ends the episode
    return env


def test_a_scene_reads_as_agentgyms_server_words_it():
    """Nearest first (ties: the farther row first), "n steps" even for one, two spaces after
    each object, the wall straight ahead "facing"; each action with its primitive steps."""
    env = _scene()
    view = read_agentgym_view(env)
    assert view.description == (
        "In front of you in this room, you can see several objects: "
        "There is a red ball 1 right in front of you 2 steps away.  "
        "There is a grey key 1 1 steps in front of you and 1 steps to your left.  "
        "There is a blue box 1 0 steps in front of you and 2 steps to your right.  "
        "The room has walls around you. You are facing a wall 6 steps away. "
        "You are not carrying anything."
    )
    forward, left, right, pickup, drop = 2, 0, 1, 3, 4
    assert view.plans == {
        "turn left": [left],
        "turn right": [right],
        "move forward": [forward],
        "pickup red ball 1": [forward, pickup],
        "pickup grey key 1": [forward, left, pickup],
        "pickup blue box 1": [right, forward, pickup],
        "go to red ball 1": [forward],
        "go to grey key 1": [forward, left],
        "go to blue box 1": [right, forward],
        "check available actions": [],
    }
    assert view.actions_text() == (
        '\nAvailable actions: ["turn left", "turn right", "move forward", "pickup red ball 1",'
        ' "pickup grey key 1", "pickup blue box 1", "go to red ball 1", "go to grey key 1",'
        ' "go to blue box 1", "check available actions"]'
    )
    assert view.refusals["drop"] == "You cannot drop the object, as you are not carrying anything."
    for primitive in view.plans["pickup grey key 1"]:
        env.step(primitive)
    held = read_agentgym_view(env)  # at (3, 5) looking west, the key in hand
    assert held.description == (
        "In front of you in this room, you can see several objects: "
        "There is a red ball 1 0 steps in front of you and 1 steps to your right.  "
        "The room has walls around you. You are facing a wall 3 steps away. "
        "You are carrying a grey key."
    )
    assert held.plans == {
        "turn left": [left],
        "turn right": [right],
        "move forward": [forward],
        "drop": [drop],
        "go to red ball 1": [right],
        "check available actions": [],
    }


def test_a_reset_states_the_goal_with_then_and_after_you_rewritten(session):
    assert agentgym_goal("go to the red door after you go to the green door") == (
        "go to the red door and go to the green door"
    )
    first = session.reset(367).observation  # GoToSeqS5R2, seed 9
    assert first.startswith(
        "Your goal: go to the green ball and go to a door, and go to the red door\n"
        "In front of you in this room, you can see several objects: "
    )
    assert first.count("\nAvailable actions: [") == 1 and first.endswith(
        '"check available actions"]'
    )


def test_checks_refusals_and_unknown_actions_answer_as_agentgym_does(session):
    start = session.reset(0)
    actions = start.observation[start.observation.index("\nAvailable actions: ") :]
    names = start.available_actions
    checked = session.step("Check Available Actions")
    assert checked.observation == "You can take the following actions: " + ", ".join(names) + (
        actions
    )
    answers = {
        "drop": "You cannot drop the object, as you are not carrying anything.",
        "fly": "The action is not recognized. Please check valid actions.",
        "": "No change in state.",
    }
    for action, answer in answers.items():
        transition = session.step(action)
        assert transition.observation == answer + actions and not transition.done


def test_a_late_success_says_completed_but_is_not_done(session):
    """minigrid's reward falls with the steps taken; AgentGym ends an episode only on a reward
    above 0.5, and adds each step's reward into the score: an action it refuses repeats the
    last one's."""
    transition = session.reset(0)  # GoToRedBallGrey: a 64-step budget
    for _ in range(20):
        transition = session.step("turn left")
    for _ in range(20):
        transition = session.step("turn right")
    while "completed" not in transition.observation:
        transition = session.step(session.expert_action())
    assert transition.observation.split("\nAvailable actions:")[0].endswith(
        "\n The task is completed."
    )
    assert 0 < transition.reward <= 0.5 and not transition.done and not transition.success
    assert session.step("fly").score == pytest.approx(2 * transition.reward)


@pytest.mark.parametrize("style", ["agentgym", "native"])
def test_the_expert_solves_simple_missions_in_either_action_set(environment, style):
    session = environment.open_session(style)
    for index in (0, 3, 12, 18, 24):  # go to, go to, open a door, pick up, unlock
        transition = session.reset(index)
        for _ in range(20):
            action = session.expert_action()
            assert action in transition.available_actions
            transition = session.step(action)
            if transition.done:
                break
        assert transition.success, (style, index)
    assert session.expert_action() is None
