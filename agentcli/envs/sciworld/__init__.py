"""ScienceWorld: elementary-science tasks in a simulated house (over ``scienceworld``, a JVM).

``session`` lists the items (from ``data/sciworld_tasks.json``, without a JVM), plays them
and reads the gold path. Importing this package starts no JVM.
"""

from __future__ import annotations

from agentcli.envs.base import EnvSpec
from agentcli.envs.sciworld.session import (
    SUCCESS_SCORE,
    load_environment,
    missing_requirement,
    task_category,
)
from agentcli.envs.wire.format import ResetRequest, WireFormat

INSTRUCTION = """\
You are doing a science task in ScienceWorld, a text simulation of a house and its \
surroundings with objects, substances, living things and electrical parts. Each turn you \
see what happened; answer with one action that moves you towards finishing the task.

Actions (OBJ is a thing as the observations name it, LOC a place):
- look around, look at OBJ, look in OBJ, read OBJ, inventory, task (repeat the task)
- go to LOC, open OBJ, close OBJ
- pick up OBJ, put down OBJ, move OBJ to OBJ
- pour OBJ into OBJ, dunk OBJ into OBJ, mix OBJ, eat OBJ, flush OBJ
- activate OBJ, deactivate OBJ, use OBJ, use OBJ on OBJ
- connect OBJ to OBJ, disconnect OBJ
- focus on OBJ: name the object the task is about. Do it only when sure: focusing on a \
wrong object fails the task.
- wait (10 time steps), wait1 (1 time step)
When the answer is "Ambiguous request" with a numbered list, reply with the number alone.

Every turn, answer in this format and nothing else:
Thought: <your reasoning>
Action: <one action>"""


# What AgentGym's sciworld server answers a reset with, and keeps in the session's /detail.
_RESET_FIELDS = (
    "task_name", "var_num", "task_description", "observation", "reward", "score", "deleted",
    "done",
)  # fmt: skip

WIRE = WireFormat(
    reset_fields=_RESET_FIELDS,
    step_fields=("observation", "reward", "score", "done"),
    reset_request=ResetRequest,
    infer_success=lambda body: float(body.get("score") or 0) >= SUCCESS_SCORE,
    detail_start={"deleted": False, "done": False},
    detail_fields=_RESET_FIELDS,
)

SPEC = EnvSpec(
    name="sciworld",
    summary="ScienceWorld: elementary-science experiments in a simulated house (4,639 items).",
    requires="Java 8+ on PATH and the scienceworld package (one JVM per session)",
    instruction=INSTRUCTION,
    max_rounds=30,  # AgentGym evaluates sciworld with --max_round 30
    wire=WIRE,
    default_port=36010,  # AgentGym's example scripts serve sciworld on 36010
    load=load_environment,
    missing=missing_requirement,
    categories=task_category,
    full_score=SUCCESS_SCORE,
    score_reported=True,
)
