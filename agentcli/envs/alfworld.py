"""ALFWorld: household tasks played as text by TextWorld's PDDL engine (the ``alfworld`` extra).

Item ids (see docs/environments/alfworld.md):

- ``10000``-``10002``: the games shipped in ``envs/data/alfworld/`` (hand-written problems in
  ALFWorld's PDDL format, played with the domain and grammar the ``alfworld`` wheel ships).
  They need no download and are always served.
- ``0``-``2619``: AgentGym's ``game`` indices, which need ALFWorld's data (``ALFWORLD_DATA``):
  ``0``-``2419`` is AgentGym's train list (``json_2.1.1/train``), ``2420``-``2619`` its test
  list (``json_2.1.1/valid_train``), both read from ``agentgym_items.json``.
- from ``2620`` on: ALFWorld's own evaluation splits, ``valid_seen`` then ``valid_unseen``,
  each the sorted list of its ``game.tw-pddl`` files.

Observations are shaped as AgentGym's server shapes them, so trajectories are interchangeable.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import sys
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from agentcli.envs.actions import explain_by_verb
from agentcli.envs.base import EnvSpec, PromptStyle, Transition
from agentcli.errors import EnvUnavailableError, TaskNotFoundError, UsageError

logger = logging.getLogger(__name__)

DATA_ENV_VAR = "ALFWORLD_DATA"
BUILTIN_FIRST_INDEX = 10_000
SHIPPED_DIR = Path(__file__).parent / "data" / "alfworld"
# Our split name -> folder under json_2.1.1. train/test follow AgentGym's lists; the ALFWorld
# evaluation splits follow, each in sorted order.
AGENTGYM_FOLDERS = {"train": "train", "test": "valid_train"}
EVAL_SPLITS = ("valid_seen", "valid_unseen")
DATA_SPLITS = (*AGENTGYM_FOLDERS, *EVAL_SPLITS)
DOWNLOAD_HINT = (
    "download ALFWorld's data (run `alfworld-download`, which fills ~/.cache/alfworld) "
    "and set ALFWORLD_DATA to that folder"
)
# Older ALFWorld grammars announce the hidden location id first ("You arrive at loc 12. ...");
# AgentGym's server cuts it, and so do we.
_ARRIVAL_LOCATION = re.compile(r"^You arrive at loc \d+\. ")
# Engine calls run one at a time per process: TextWorld's PDDL engine shares module-level
# parsers between instances (two sessions stepping at once corrupt each other's text), and
# fast_downward's translator keeps global options and overwrites sys.argv. The calls are
# pure-Python CPU work under the GIL, so the lock costs little; scale out with processes.
_ENGINE_LOCK = threading.Lock()

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


# The oracle teacher's reasons, by the verb of the planner's action (first match wins).
REASONS = {
    "go to ": "I go to the {rest}, the next place my plan needs.",
    "open ": "I open the {rest} to see what is inside.",
    "take ": "I take the {rest}: my task needs it.",
    "clean ": "My task needs it clean: I clean the {rest}.",
    "heat ": "My task needs it hot: I heat the {rest}.",
    "cool ": "My task needs it cold: I cool the {rest}.",
    "move ": "I move the {rest}, where my task wants it.",
    "put ": "I put the {rest}, where my task wants it.",
    "use ": "I use the {rest}, as my task asks.",
}


@dataclass(frozen=True)
class Game:
    """One ALFWorld game. ``name`` is ``<task folder>/<trial>``, AgentGym's ``task_type``."""

    name: str
    split: str
    file: Path | None = None  # game.tw-pddl under ALFWORLD_DATA; None for shipped games
    problem: Path | None = None  # the PDDL problem of a shipped game
    task: str = ""  # goal sentence of a shipped game (real games carry it in their grammar)

    @property
    def task_type(self) -> str:
        return self.name.split("-", 1)[0]


class _Splits(dict):
    """Splits on hand; asking for a data split when no data is configured says what to do."""

    def __missing__(self, name: str) -> list[int]:
        if name in DATA_SPLITS:
            raise EnvUnavailableError(
                f"alfworld split {name!r} needs ALFWorld data: {DOWNLOAD_HINT}"
            )
        raise KeyError(name)


class GameCatalog:
    """Item index -> game, from the shipped files and (when configured) ALFWORLD_DATA."""

    def __init__(self, data_dir: Path | None) -> None:
        self.data_dir = data_dir
        manifest = json.loads((SHIPPED_DIR / "games.json").read_text())
        self.builtin = [
            Game(
                entry["name"], "builtin", problem=SHIPPED_DIR / entry["problem"], task=entry["task"]
            )
            for entry in manifest
        ]
        # AgentGym's lists name their games, so task types are known even without the data.
        agentgym = json.loads((SHIPPED_DIR / "agentgym_items.json").read_text())
        self.data_games = [
            Game(name, split, file=self._file(folder, name))
            for split, folder in AGENTGYM_FOLDERS.items()
            for name in _flatten(agentgym[split])
        ]
        for split in EVAL_SPLITS if data_dir else ():
            root = data_dir / "json_2.1.1" / split
            names = sorted(
                path.parent.relative_to(root).as_posix() for path in root.glob("*/*/game.tw-pddl")
            )
            self.data_games += [Game(name, split, file=self._file(split, name)) for name in names]

    def _file(self, folder: str, name: str) -> Path | None:
        if self.data_dir is None:
            return None
        return self.data_dir / "json_2.1.1" / folder / name / "game.tw-pddl"

    def game(self, index: int) -> Game:
        if 0 <= index - BUILTIN_FIRST_INDEX < len(self.builtin):
            return self.builtin[index - BUILTIN_FIRST_INDEX]
        if 0 <= index < len(self.data_games):
            return self.data_games[index]
        if self.data_dir is None and 0 <= index < BUILTIN_FIRST_INDEX:
            raise EnvUnavailableError(
                f"alfworld item {index} is not a shipped game; ALFWorld's own games need its "
                f"data: {DOWNLOAD_HINT}"
            )
        last_builtin = BUILTIN_FIRST_INDEX + len(self.builtin) - 1
        raise TaskNotFoundError(
            f"alfworld has no item {index}: its items are 0-{len(self.data_games) - 1} "
            f"(ALFWorld's data) and {BUILTIN_FIRST_INDEX}-{last_builtin} (shipped games)"
        )

    def splits(self) -> dict[str, list[int]]:
        builtin = [BUILTIN_FIRST_INDEX + i for i in range(len(self.builtin))]
        if self.data_dir is None:
            return _Splits(builtin=builtin)
        found: dict[str, list[int]] = {}
        for index, game in enumerate(self.data_games):
            found.setdefault(game.split, []).append(index)
        return {**found, "builtin": builtin}

    def game_data(self, game: Game) -> str | dict[str, Any]:
        """What TextWorld's PDDL engine loads: a game.tw-pddl path, or a shipped game packed
        with the wheel's domain and grammar (the grammar's task line filled in, as ALFWorld's
        own game generation does)."""
        if game.problem is not None:
            domain, grammar = _wheel_logic()
            return {
                "pddl_domain": domain,
                "grammar": grammar.replace("UNKNOWN GOAL", game.task),
                "pddl_problem": game.problem.read_text(),
            }
        if game.file is None:
            raise EnvUnavailableError(
                f"alfworld game {game.name} needs ALFWorld data: {DOWNLOAD_HINT}"
            )
        if not game.file.is_file():
            raise EnvUnavailableError(
                f"{game.file} is missing: {DATA_ENV_VAR} must hold ALFWorld's json_2.1.1 data "
                "(run `alfworld-download`)"
            )
        return str(game.file)


def _flatten(groups: list[list[Any]]) -> list[str]:
    """``[[task folder, [trial, ...]], ...]`` -> ``["task folder/trial", ...]``, order kept."""
    return [f"{folder}/{trial}" for folder, trials in groups for trial in trials]


@cache
def _wheel_logic() -> tuple[str, str]:
    from importlib.resources import files

    data = files("alfworld") / "data"
    return (data / "alfred.pddl").read_text(), (data / "alfred.twl2").read_text()


def _data_dir() -> Path | None:
    value = os.environ.get(DATA_ENV_VAR)
    return Path(value).expanduser() if value else None


@cache
def _catalog(data_dir: Path | None) -> GameCatalog:
    return GameCatalog(data_dir)


class _Engine:
    """TextWorld's PDDL engine wrapped as ALFWorld wraps it (names demangled to "cabinet 1").

    Each engine loads its own copy of fast_downward's library. Unloading copies is unsafe
    (closing two of them crashes the process at exit), so engines are never closed: a closed
    session hands its engine to the next one (``_take_engine`` / ``_give_back_engine``).
    """

    def __init__(self) -> None:
        import textworld
        from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos
        from textworld.envs import PddlEnv

        infos = textworld.EnvInfos(
            won=True, admissible_commands=True, policy_commands=True, facts=True
        )
        self.env = AlfredInfos(AlfredDemangler()(PddlEnv(infos)))

    def start(self, game_data: str | dict[str, Any]) -> Any:
        with _ENGINE_LOCK:
            argv = sys.argv[:]
            try:
                self.env.load(game_data)
                return self.env.reset()
            finally:
                sys.argv[:] = argv

    def step(self, action: str) -> Any:
        with _ENGINE_LOCK:
            state, _, _ = self.env.step(action)
            return state


_idle_engines: list[_Engine] = []
_idle_engines_lock = threading.Lock()


def _take_engine() -> _Engine:
    with _idle_engines_lock:
        if _idle_engines:
            return _idle_engines.pop()
    return _Engine()


def _give_back_engine(engine: _Engine) -> None:
    with _idle_engines_lock:
        _idle_engines.append(engine)


def _reset_observation(feedback: str) -> str:
    # Drop the "-= Welcome to TextWorld, ALFRED! =-" banner; join the rest as AgentGym does.
    return "\n".join(feedback.split("\n\n")[1:])


class AlfworldSession:
    def __init__(self, catalog: GameCatalog) -> None:
        self._catalog = catalog
        self._engine: _Engine | None = _take_engine()
        self._state: Any = None
        self._task = ""

    def reset(self, index: int) -> Transition:
        if self._engine is None:
            raise UsageError("this alfworld session is closed; open a new one")
        game = self._catalog.game(index)
        self._state = None  # a failed reset must not leave the previous game steppable
        self._state = self._engine.start(self._catalog.game_data(game))
        self._task = _task_sentence(self._state["feedback"])
        return Transition(
            observation=_reset_observation(self._state["feedback"]),
            available_actions=list(self._state["admissible_commands"]),
            extra={"task_type": game.name},
        )

    def step(self, action: str) -> Transition:
        if self._state is None:
            raise UsageError("reset the alfworld session to an item before stepping")
        self._state = self._engine.step(action)
        won = bool(self._state["won"])
        return Transition(
            observation=_ARRIVAL_LOCATION.sub("", self._state["feedback"]),
            reward=float(won),
            score=float(won),
            done=won,
            success=won,
            available_actions=list(self._state["admissible_commands"]),
        )

    def expert_action(self) -> str | None:
        """The first action of the planner's plan, recomputed from the current state."""
        if self._state is None or self._state["won"]:
            return None
        plan = self._state["policy_commands"]
        return plan[0] if plan else None

    def explain(self, action: str) -> str:
        """The task, then what the planner's next action does for it, by its verb."""
        return f"My task is to {self._task} {explain_by_verb(action, REASONS)}"

    def close(self) -> None:
        if self._engine is not None:
            _give_back_engine(self._engine)
        self._engine = None
        self._state = None


class AlfworldEnvironment:
    def __init__(self, catalog: GameCatalog) -> None:
        self.catalog = catalog

    def splits(self) -> dict[str, list[int]]:
        return self.catalog.splits()

    def open_session(self, style: PromptStyle = "agentgym") -> AlfworldSession:
        # the simulator words the observations: one wording for either style
        return AlfworldSession(self.catalog)

    def privileged_state(self, index: int) -> str:
        """The task, what every receptacle holds at the start, and the expert's full plan."""
        game = self.catalog.game(index)
        engine = _take_engine()
        try:
            state = engine.start(self.catalog.game_data(game))
        finally:
            _give_back_engine(engine)
        contents: dict[str, list[str]] = {}
        closed: set[str] = set()
        for fact in state["facts"]:
            names = [argument.name.strip() for argument in fact.arguments]
            if fact.name == "receptacleatlocation":
                contents.setdefault(names[0], [])
            elif fact.name == "inreceptacle":
                contents.setdefault(names[1], []).append(names[0])
            elif fact.name == "openable":
                closed.add(names[0])
            elif fact.name == "opened":
                closed.discard(names[0])
        task = _task_sentence(state["feedback"])
        lines = [f"Task: {task}", "Where things are at the start:"]
        for receptacle in sorted(contents, key=_natural_key):
            held = ", ".join(sorted(contents[receptacle], key=_natural_key)) or "nothing"
            state_note = " (closed)" if receptacle in closed else ""
            lines.append(f"- {receptacle}{state_note}: {held}")
        plan = state["policy_commands"]
        lines.append(f"Expert plan from the start ({len(plan)} actions):")
        lines += plan
        return "\n".join(lines)


def _task_sentence(feedback: str) -> str:
    """``put a clean soapbar in cabinet.`` out of a game's opening text."""
    return feedback.rsplit("Your task is to: ", 1)[-1].strip()


def _natural_key(name: str) -> tuple[str, int]:
    word, _, number = name.rpartition(" ")
    return (word, int(number)) if number.isdigit() else (name, 0)


def _load() -> AlfworldEnvironment:
    reason = _missing()
    if reason:
        raise EnvUnavailableError(reason)
    data_dir = _data_dir()
    catalog = _catalog(data_dir)
    if data_dir is None:
        logger.warning(
            "%s is not set: serving only the %d shipped alfworld games (items %d-%d); "
            "for the real ones, %s",
            DATA_ENV_VAR,
            len(catalog.builtin),
            BUILTIN_FIRST_INDEX,
            BUILTIN_FIRST_INDEX + len(catalog.builtin) - 1,
            DOWNLOAD_HINT,
        )
    return AlfworldEnvironment(catalog)


def _missing() -> str | None:
    if not all(importlib.util.find_spec(name) for name in ("alfworld", "textworld")):
        return "the alfworld extra is not installed: pip install 'agentgym[alfworld]'"
    data_dir = _data_dir()
    if data_dir is not None and not (data_dir / "json_2.1.1").is_dir():
        return f"{DATA_ENV_VAR}={data_dir} has no json_2.1.1 folder: {DOWNLOAD_HINT}"
    return None


def _category(index: int) -> str:
    return _catalog(_data_dir()).game(index).task_type


SPEC = EnvSpec(
    name="alfworld",
    summary="Household tasks in ALFWorld's text world (3 shipped games; 2,620+ with its data).",
    requires="the alfworld extra (pip install 'agentgym[alfworld]'); ALFWORLD_DATA for real games",
    instruction=INSTRUCTION,
    max_rounds=30,  # AgentGym evaluates alfworld with --max_round 30
    wire="alfworld",
    default_port=36002,  # AgentGym's example scripts serve alfworld on 36002
    load=_load,
    missing=_missing,
    probe_action="look",
    categories=_category,
)
