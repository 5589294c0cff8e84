"""BabyAI as a text environment: AgentGym's 40 minigrid levels, our text, minigrid's bot as expert.

``levels`` says which task an item is, ``environment`` opens sessions, ``session`` plays it
(``agentgym_session`` in AgentGym's words), ``text`` renders the grid and ``expert`` advises.
``SPEC`` serves AgentGym's levels, ``PUT_NEXT_SPEC`` one fully observed room.
Importing this package imports no simulator: minigrid is imported when a level is first built.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from agentcli.envs.babyai.environment import BabyAIEnvironment
from agentcli.envs.babyai.levels import AGENTGYM_LEVELS, PUT_NEXT_ROOM, Variant
from agentcli.envs.base import EnvSpec
from agentcli.envs.wire.format import DEFAULT_WIRE
from agentcli.errors import EnvUnavailableError

INSTRUCTION = """\
You are an agent in a BabyAI grid world: rooms joined by doors, with keys, balls and boxes of \
several colours. Each turn you read what you can see from where you stand (up to 6 steps ahead \
and 3 to each side; walls and closed doors hide what is behind them) and the actions you can take \
there. Complete the goal given in the first observation.

Actions:
- turn left / turn right: turn in place by a quarter turn.
- move forward: step one cell ahead.
- go to <object> <id>: walk until you face that object, e.g. "go to red ball 1".
- pick up <object> <id>: walk to that key, ball or box and pick it up; you can carry one thing.
- drop: put what you carry on the free cell in front of you.
- go through <door> <id>: walk into the doorway of an open door.
- toggle and go through <door> <id>: open a closed door (a locked one needs a key of its colour \
in your hands) and step into its doorway.
- toggle: open, close or unlock the door right in front of you, or open the box there.
Write object and door names exactly as the observation does; the id counts things of the same \
name, nearest first.

Answer every turn in this format:
Thought: <your reasoning>
Action: <one of the available actions>"""

PUT_NEXT_INSTRUCTION = """\
You are in a room with keys, balls and boxes; each turn you read your goal and the room.
Actions: turn left, turn right, move forward, go to <object> <id>, pick up <object> <id>, drop.
Answer with "Thought: <your reasoning>" and "Action: <one action>" lines."""


def _missing() -> str | None:
    if importlib.util.find_spec("minigrid") is None:
        return "minigrid is not installed: run `pip install minigrid`."
    return None


def _spec(variant: Variant, **fields: Any) -> EnvSpec:
    """A BabyAI variant's spec: babyai's wire format, rounds and probe, a loader of its own."""

    def load() -> BabyAIEnvironment:
        problem = _missing()
        if problem is not None:
            raise EnvUnavailableError(problem)
        return BabyAIEnvironment(variant)

    return EnvSpec(
        name=variant.name,
        requires="the minigrid package (installed with agentgym)",
        max_rounds=20,
        wire=DEFAULT_WIRE,  # AgentGym's babyai server speaks the common shape
        load=load,
        missing=_missing,
        probe_action="turn left",
        **fields,
    )


SPEC = _spec(
    AGENTGYM_LEVELS,
    summary="BabyAI grid-world instructions (40 minigrid levels) rendered as text.",
    instruction=INSTRUCTION,
    default_port=36003,
    categories=AGENTGYM_LEVELS.category,
)
PUT_NEXT_SPEC = _spec(
    PUT_NEXT_ROOM,
    summary="BabyAI PutNextLocal in one room, fully observed: the quickstart's environment.",
    instruction=PUT_NEXT_INSTRUCTION,
    default_port=36004,
)
