"""ALFWorld: household tasks played as text by TextWorld's PDDL engine (the ``alfworld`` extra).

One module per job: ``generation`` writes problems from the wheel's data, ``games`` maps item
indices to games (see its docstring and docs/environments/alfworld.md), ``expert`` decides the
next action from facts, ``sightings`` cuts them down to what the episode has shown, ``session``
plays games on the engine.

Observations are shaped as AgentGym's server shapes them, so trajectories are interchangeable.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from functools import cache
from pathlib import Path

from agentcli.envs.alfworld.games import (
    BUILTIN_FIRST_INDEX,
    DATA_ENV_VAR,
    DOWNLOAD_HINT,
    GameCatalog,
)
from agentcli.envs.alfworld.session import AlfworldEnvironment, AlfworldSession
from agentcli.envs.base import EnvSpec
from agentcli.envs.wire.format import GameResetRequest, WireFormat, completed
from agentcli.errors import EnvUnavailableError

__all__ = [
    "BUILTIN_FIRST_INDEX",
    "DATA_ENV_VAR",
    "SPEC",
    "AlfworldEnvironment",
    "AlfworldSession",
    "GameCatalog",
]

logger = logging.getLogger(__name__)
MAX_ROUNDS = 30  # AgentGym evaluates alfworld with --max_round 30

INSTRUCTION = """\
You are a robot doing a household task in a text world. The first message describes the room \
and gives your task, e.g. "put a clean soapbar in cabinet"; each later message says what your \
last action did.

Actions (name things as the room does, e.g. "cabinet 1", "soapbar 2"):
- go to <receptacle>
- open <receptacle>, close <receptacle>
- take <object> from <receptacle>
- move <object> to <receptacle> (games from older ALFWorld data say: put <object> in/on \
<receptacle>)
- clean <object> with <receptacle>, heat <object> with <receptacle>, cool <object> with \
<receptacle>
- use <object>: switch a lamp on or off
- examine <object or receptacle>, look, inventory
You hold one object at a time. An action the world cannot carry out changes nothing and \
answers "Nothing happens."; when available actions are listed, pick one of them.

Every turn, answer in this format and nothing else:
Thought: <your reasoning>
Action: <one action>"""


def _data_dir() -> Path | None:
    value = os.environ.get(DATA_ENV_VAR)
    return Path(value).expanduser() if value else None


@cache
def _catalog(data_dir: Path | None) -> GameCatalog:
    return GameCatalog(data_dir)


def _load() -> AlfworldEnvironment:
    reason = _missing()
    if reason:
        raise EnvUnavailableError(reason)
    data_dir = _data_dir()
    catalog = _catalog(data_dir)
    if data_dir is None:
        logger.warning(
            "%s is not set: alfworld's train/test splits and items 0-%d are generated games "
            "(not comparable with published ALFWorld results); for the real ones, %s",
            DATA_ENV_VAR,
            len(catalog.data_games) - 1,
            DOWNLOAD_HINT,
        )
    return AlfworldEnvironment(catalog, max_plan=MAX_ROUNDS)


def _missing() -> str | None:
    if not all(importlib.util.find_spec(name) for name in ("alfworld", "textworld")):
        return "the alfworld extra is not installed: pip install 'agentgym[alfworld]'"
    data_dir = _data_dir()
    if data_dir is not None and not (data_dir / "json_2.1.1").is_dir():
        return f"{DATA_ENV_VAR}={data_dir} has no json_2.1.1 folder: {DOWNLOAD_HINT}"
    return None


def _category(index: int) -> str:
    return _catalog(_data_dir()).game(index).task_type


def _item_meta(index: int) -> dict[str, bool]:
    """``generated``: the item is a game written by generation.py, not one of ALFWorld's."""
    return {"generated": _catalog(_data_dir()).is_generated(index)}


def _note() -> str | None:
    if _data_dir() is None:
        return "no ALFWORLD_DATA, so its games are generated (items 0-2619 stand in)"
    return None


# AgentGym's alfworld server: a reset names its task ``game``; GET /available_actions.
WIRE = WireFormat(
    reset_fields=("id", "observation", "available_actions", "task_type"),
    step_fields=("observation", "reward", "available_actions", "done"),
    reset_request=GameResetRequest,
    infer_success=completed,
    index_field="game",
    reset_extra={"world_type": "Text"},
    detail_start={"done": False, "reward": 0, "deleted": False},
    detail_fields=(
        "world_type",
        "game",
        "observation",
        "available_actions",
        "done",
        "reward",
        "deleted",
    ),
    available_actions_route=True,
)

SPEC = EnvSpec(
    name="alfworld",
    summary="Household tasks in ALFWorld's text world (generated games; real ones with its data).",
    requires="the alfworld extra (pip install 'agentgym[alfworld]'); ALFWORLD_DATA for real games",
    instruction=INSTRUCTION,
    max_rounds=MAX_ROUNDS,
    wire=WIRE,
    default_port=36002,  # AgentGym's example scripts serve alfworld on 36002
    load=_load,
    missing=_missing,
    probe_action="look",
    categories=_category,
    item_meta=_item_meta,
    note=_note,
    serial_engine=True,
    expert="searches what the episode has not shown",  # the first one knew where things were
)
