"""ALFWorld games played by TextWorld's PDDL engine with ALFWorld's wrappers."""

from __future__ import annotations

import re
import sys
import threading
from typing import Any

from agentcli.envs.actions import explain_by_verb
from agentcli.envs.alfworld import (
    expert,
    generation,
    sightings,
    textworld_speedups,
    translations,
)
from agentcli.envs.alfworld.games import Game, GameCatalog
from agentcli.envs.base import PromptStyle, Transition
from agentcli.errors import UsageError

# Older ALFWorld grammars announce the hidden location id first ("You arrive at loc 12. ...");
# AgentGym's server cuts it, and so do we.
_ARRIVAL_LOCATION = re.compile(r"^You arrive at loc \d+\. ")
# Engine calls run one at a time per process: TextWorld's PDDL engine shares module-level
# parsers between instances (two sessions stepping at once corrupt each other's text), and
# fast_downward's translator keeps global options and overwrites sys.argv. The calls are
# pure-Python CPU work under the GIL, so the lock costs little; scale out with processes.
_ENGINE_LOCK = threading.Lock()
# The oracle teacher's reasons, by the verb of the expert's action (first match wins).
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


class _Engine:
    """TextWorld's PDDL engine wrapped as ALFWorld wraps it (names demangled to "cabinet 1").

    Each engine loads its own copy of fast_downward's library. Unloading copies is unsafe
    (closing two of them crashes the process at exit), so engines are never closed: a closed
    session hands its engine to the next one (``_take_engine`` / ``_give_back_engine``).
    """

    def __init__(self) -> None:
        import textworld
        from textworld.envs import PddlEnv

        wrappers = generation.import_alfworld("alfworld.agents.environment.alfred_tw_env")

        translations.install()
        textworld_speedups.install()
        infos = textworld.EnvInfos(won=True, admissible_commands=True, facts=True)
        self.env = wrappers.AlfredInfos(wrappers.AlfredDemangler()(PddlEnv(infos)))

    def start(self, game_data: str | dict[str, Any]) -> Any:
        with _ENGINE_LOCK:
            argv = sys.argv[:]
            try:
                with translations.without_replanning():  # the expert decides from facts
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


def expert_action(state: Any, game: Game, seen: set[str] | None = None) -> str | None:
    """The expert's next action in engine state ``state``, or None once the game is won: as
    an agent that has looked into the receptacles ``seen`` could decide it, or, without
    ``seen``, knowing where everything is."""
    if state["won"]:
        return None
    world = expert.World.from_facts(state["facts"])
    if seen is not None:
        world = sightings.known_world(world, seen)
    return expert.next_action(world, game.signature, state["admissible_commands"])


class AlfworldSession:
    def __init__(self, catalog: GameCatalog) -> None:
        self._catalog = catalog
        self._engine: _Engine | None = _take_engine()
        self._state: Any = None
        self._game: Game | None = None
        self._task = ""
        self._seen: set[str] = set()  # receptacles whose contents the episode has shown

    def reset(self, index: int) -> Transition:
        if self._engine is None:
            raise UsageError("this alfworld session is closed; open a new one")
        game = self._catalog.game(index)
        self._state = None  # a failed reset must not leave the previous game steppable
        self._state = self._engine.start(self._catalog.game_data(game))
        self._game = game
        self._task = _task_sentence(self._state["feedback"])
        self._seen = set()
        return Transition(
            observation=_reset_observation(self._state["feedback"]),
            available_actions=list(self._state["admissible_commands"]),
            extra={"task_type": game.name},
        )

    def step(self, action: str) -> Transition:
        if self._state is None:
            raise UsageError("reset the alfworld session to an item before stepping")
        self._state = self._engine.step(action)
        shown = sightings.seen_after(action, self._state["facts"])
        if shown:
            self._seen.add(shown)
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
        """The expert's next action, decided from what the episode has shown so far (it
        searches for what it has not seen; docs/environments/alfworld.md)."""
        if self._state is None:
            return None
        return expert_action(self._state, self._game, self._seen)

    def explain(self, action: str) -> str:
        """The task, then what the expert's next action does for it, by its verb."""
        return f"My task is to {self._task} {explain_by_verb(action, REASONS)}"

    def close(self) -> None:
        if self._engine is not None:
            _give_back_engine(self._engine)
        self._engine = None
        self._state = None


class AlfworldEnvironment:
    def __init__(self, catalog: GameCatalog, max_plan: int) -> None:
        self.catalog = catalog
        self.max_plan = max_plan  # the expert's plan in privileged state stops here

    def splits(self) -> dict[str, list[int]]:
        return self.catalog.splits()

    def open_session(self, style: PromptStyle = "agentgym") -> AlfworldSession:
        # the simulator words the observations: one wording for either style
        return AlfworldSession(self.catalog)

    def privileged_state(self, index: int) -> str:
        """The task, what every receptacle holds at the start, and the expert's full plan
        knowing all that (played out on the engine from the start): the teacher's privilege,
        so it is the shortest plan, not the search an agent must make."""
        game = self.catalog.game(index)
        engine = _take_engine()
        try:
            state = engine.start(self.catalog.game_data(game))
            world = expert.World.from_facts(state["facts"])
            task = _task_sentence(state["feedback"])
            plan: list[str] = []
            while len(plan) < self.max_plan and (action := expert_action(state, game)):
                plan.append(action)
                state = engine.step(action)
        finally:
            _give_back_engine(engine)
        contents: dict[str, list[str]] = {place: [] for place in world.location}
        for thing, place in world.inside.items():
            contents[place].append(thing)
        lines = [f"Task: {task}", "Where things are at the start:"]
        for receptacle in sorted(contents, key=expert.natural_key):
            held = ", ".join(sorted(contents[receptacle], key=expert.natural_key)) or "nothing"
            state_note = " (closed)" if world.closed(receptacle) else ""
            lines.append(f"- {receptacle}{state_note}: {held}")
        lines.append(f"Expert plan from the start ({len(plan)} actions):")
        lines += plan
        return "\n".join(lines)


def _task_sentence(feedback: str) -> str:
    """``put a clean soapbar in cabinet.`` out of a game's opening text."""
    return feedback.rsplit("Your task is to: ", 1)[-1].strip()
