"""The one rendering of what the student sees, and reading its replies back."""

from __future__ import annotations

import pytest

from agentcli.conversation import (
    ACKNOWLEDGEMENT,
    Opening,
    StudentView,
    check_style,
    cut_after_action,
    episode_conversation,
    holds_action_line,
    invalid_reply_observation,
    is_invalid_reply,
    observation_text,
    parse_reply,
    student_messages,
    turn_text,
)
from agentcli.envs.base import Transition
from agentcli.errors import UsageError
from agentcli.records import Episode, Step

NATIVE = StudentView(prompt="native")
CRAFT = Opening("Craft things.")

STEPS = [
    Step(observation="obs 0", reason="r0", action="a0"),
    Step(observation="obs 1", reason="r1", action="a1"),
    Step(observation="obs 2", reason="", action="a2", done=True),
]


def _shape(messages) -> list[tuple[str, str, bool | None]]:
    return [(m.role, m.content, m.loss) for m in messages]


def _episode(**fields) -> Episode:
    return Episode(
        item_id="textcraft_3",
        env="textcraft",
        instruction="Craft things.",
        steps=STEPS[:2],
        final_observation="Crafted 1 minecraft:stick",
        **fields,
    )


def test_an_episode_has_agentgym_shape():
    episode = _episode(meta={"prompt": "native"})
    assert _shape(episode_conversation(episode)) == [
        ("user", "Craft things.", None),
        ("assistant", ACKNOWLEDGEMENT, False),
        ("user", "obs 0", None),
        ("assistant", "Thought: r0\nAction: a0", True),
        ("user", "obs 1", None),
        ("assistant", "Thought: r1\nAction: a1", True),
        ("user", "Crafted 1 minecraft:stick", None),
    ]
    assert ACKNOWLEDGEMENT == "OK. I'll follow your instructions and try my best to solve the task."
    bare = episode_conversation(episode, StudentView(instruction=False, reasons=False))
    assert _shape(bare)[:2] == [("user", "obs 0", None), ("assistant", "Action: a0", True)]


def test_agentgym_style_writes_turns_as_agentgym_does():
    """AgentGym's prompts ask for "Thought:\nyour thoughts.\n\nAction:\nyour next action" and
    its trajectories are written so; its webshop client acknowledges with "Ok."."""
    episode = _episode()  # no recorded style: the view's (agentgym by default)
    assert _shape(episode_conversation(episode))[1:4] == [
        ("assistant", ACKNOWLEDGEMENT, False),
        ("user", "obs 0", None),
        ("assistant", "Thought:\nr0\n\nAction:\na0", True),
    ]
    assert turn_text("", "go", style="agentgym") == "Action:\ngo"
    shop = Episode(item_id="webshop_0", env="webshop", instruction="Shop.", steps=STEPS[:1])
    assert episode_conversation(shop)[1].content == "Ok."
    assert episode_conversation(shop, NATIVE)[1].content == ACKNOWLEDGEMENT
    # an env AgentGym lacks is worded our way under either style
    room = Episode(item_id="babyai-putnext_0", env="babyai-putnext", instruction="", steps=STEPS)
    assert episode_conversation(room)[3].content == "Thought: r0\nAction: a0"


def test_episodes_played_in_another_style_are_refused_by_item():
    check_style([_episode(meta={"prompt": "agentgym"}), _episode()], StudentView())
    with pytest.raises(
        UsageError, match="textcraft_3 was played with prompt 'native'.*--prompt native"
    ):
        check_style([_episode(meta={"prompt": "native"})], StudentView())


def test_the_student_is_shown_its_own_turns_unlearned_then_the_observation():
    shown = student_messages(CRAFT, STEPS[:2], "obs 2", NATIVE)
    assert _shape(shown) == [
        ("user", "Craft things.", None),
        ("assistant", ACKNOWLEDGEMENT, False),
        ("user", "obs 0", None),
        ("assistant", "Thought: r0\nAction: a0", False),
        ("user", "obs 1", None),
        ("assistant", "Thought: r1\nAction: a1", False),
        ("user", "obs 2", None),
    ]


@pytest.mark.parametrize("instruction", [True, False])
def test_a_history_window_keeps_the_opening_and_the_last_turns(instruction):
    view = StudentView(history_steps=1, instruction=instruction, reasons=False)
    shown = student_messages(CRAFT, STEPS[:2], "obs 2", view)
    opening = [("user", "Craft things.", None), ("assistant", ACKNOWLEDGEMENT, False)]
    assert _shape(shown) == [
        *(opening if instruction else []),
        ("user", "obs 1", None),
        ("assistant", "Action: a1", False),
        ("user", "obs 2", None),
    ]
    none_shown = student_messages(CRAFT, STEPS[:2], "obs 2", view.model_copy(
        update={"history_steps": 0}
    ))  # fmt: skip
    assert (
        _shape(none_shown)[-1] == ("user", "obs 2", None) and len(none_shown) == 1 + 2 * instruction
    )


def test_single_prompt_puts_the_history_in_one_user_message():
    view = StudentView(format="single-prompt", history_steps=1)
    [message] = student_messages(CRAFT, STEPS[:2], "obs 2", view)
    assert message.role == "user"
    assert message.content.splitlines() == [
        "Craft things.",
        "",
        "Observation: obs 0",  # the first observation states the task
        "(earlier steps not shown: 1)",
        "Observation: obs 1",
        "Thought: r1",
        "Action: a1",
        "Observation: obs 2",
    ]


def test_a_turn_without_a_reason_is_its_action_line():
    assert turn_text("why", "go") == "Thought: why\nAction: go"
    assert turn_text("", "go") == "Action: go"
    assert turn_text("why", "go", StudentView(reasons=False)) == "Action: go"


def test_the_agent_reads_what_its_env_adds_to_the_wire_observation():
    transition = Transition(
        observation="You are in the kitchen.",
        available_actions=["look", "go north"],
        extra={"task_description": "Boil water."},
    )
    assert observation_text(transition, first=True, style="native") == (
        "Boil water.\nYou are in the kitchen.\nAVAILABLE ACTIONS: look, go north"
    )
    assert observation_text(transition, first=False, style="native") == (
        "You are in the kitchen.\nAVAILABLE ACTIONS: look, go north"
    )


def test_agentgym_style_frames_observations_as_its_clients_do():
    """alfworld's client (``observe``) lists the actions joined by bare commas, and only the
    conversation's first observation is ``observe()``: later ones are the step's ``state``."""
    transition = Transition(
        observation="You are in the kitchen.",
        available_actions=["look", "go north"],
        extra={"task_description": "Boil water."},
    )
    assert observation_text(transition, first=True, style="agentgym") == (
        "Boil water.\nYou are in the kitchen.\nAVAILABLE ACTIONS: look,go north"
    )
    assert observation_text(transition, first=False, style="agentgym") == (
        "You are in the kitchen."
    )


@pytest.mark.parametrize(
    ("text", "thought", "action"),
    [
        ("Thought: I need planks.\nAction: get 1 oak log", "I need planks.", "get 1 oak log"),
        ("Thought: hm\n**Action:** `craft 4 oak planks using 1 oak log`.", "hm",
         "craft 4 oak planks using 1 oak log"),
        ("Thought: a\nAction:\n  inventory\n", "a", "inventory"),
        ("Action: look</s>", "", "look"),
        ("go north", "", "go north"),  # a single line is the action, as AgentGym reads it
        ("Action: a\nAction: b", "", "b"),  # the last action line counts
        # WebArena's answer format: the first span between triple backticks, as its server
        # reads it; the reasoning before it
        ("Let's think. The price is there.\nIn summary, the next action I will perform is "
         "```stop [$279.49]``` or ```click [3]```", "Let's think. The price is there.\nIn "
         "summary, the next action I will perform is", "stop [$279.49]"),
        ("Thought: go\nAction: ```type [164] [cmu] [1]```", "go", "type [164] [cmu] [1]"),
    ],
)  # fmt: skip
def test_a_reply_splits_into_its_reason_and_one_action(text, thought, action):
    parsed = parse_reply(text)
    assert (parsed.thought, parsed.action, parsed.error) == (thought, action, None)


@pytest.mark.parametrize(
    ("text", "error"),
    [("I am not sure.\nLet me think.", "no 'Action:' line"), ("Thought: x\nAction: ", "empty")],
)
def test_a_reply_without_a_usable_action_says_why(text, error):
    parsed = parse_reply(text)
    assert parsed.action == "" and error in parsed.error
    observation = invalid_reply_observation(parsed.error)
    assert is_invalid_reply(observation) and "Action: <one action>" in observation
    assert not is_invalid_reply("You see a key.") and not is_invalid_reply(None)


def test_a_turn_ends_with_its_action_line():
    assert holds_action_line("Thought: x\nAction: look\n")
    assert not holds_action_line("Thought: x\nAction: look")  # the line may go on
    assert not holds_action_line("Thought: x\nAction:\n")  # an empty line does not end it
    assert (
        cut_after_action("Thought: x\nAction: look\nObservation: more")
        == "Thought: x\nAction: look"
    )


@pytest.mark.parametrize(
    ("view", "said"),
    [(StudentView(format="single-prompt"), "single-prompt"),
     (StudentView(history_steps=2), "history window (history_steps=2)"),
     (StudentView(format="single-prompt", history_steps=0), "single-prompt")],
)  # fmt: skip
def test_a_view_says_what_keeps_it_from_the_whole_conversation(view, said):
    assert not view.whole_conversation and said in view.why_not_whole
    assert StudentView().whole_conversation and StudentView().why_not_whole is None
