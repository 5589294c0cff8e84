"""The interface every environment implements, and the values that cross it.

An ``Environment`` is created once per server process and holds what never changes
(recipe trees, task lists, game files). It opens ``Session``s: one live episode each,
driven by ``reset(index)`` then ``step(action)`` until ``done``.

Item indices are the integers after the env name in an item id (``textcraft_12`` → 12);
they mean the same task as in AgentGym, on every machine and across restarts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentcli.agentgym_prompts import PromptStyle
from agentcli.envs.wire.format import WireFormat


@dataclass(frozen=True)
class Transition:
    """What the simulator says after a reset or a step.

    ``observation`` is the wire text (what AgentGym's server sends in its ``observation``
    field); ``score`` is on the env's native scale (sciworld 0-100, others 0-1);
    ``success`` is the env's own success rule, never ``reward == 1``.
    ``extra`` holds per-env wire fields (``task_description``, ``task_type``, ...).
    """

    observation: str
    reward: float = 0.0
    score: float = 0.0
    done: bool = False
    success: bool = False
    available_actions: list[str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Session(Protocol):
    """One live episode. Not thread-safe: the server holds a lock per session."""

    def reset(self, index: int) -> Transition:
        """Start task ``index`` (any non-negative int; envs that wrap say so)."""
        ...

    def step(self, action: str) -> Transition:
        """Apply one action (already parsed out of model text)."""
        ...

    def expert_action(self) -> str | None:
        """The oracle's next action from the current state, or None when it has none.

        Asking changes nothing: the answer depends only on the actions stepped so far, so
        asking along an episode gives what a fresh replay of the same actions would.
        """
        ...

    def explain(self, action: str) -> str:
        """Why the expert would take ``action`` now (the oracle teacher's reason), in the
        agent's voice and from what the agent can know here plus what the expert's plan
        implies from this state; never what happens later."""
        ...

    def close(self) -> None:
        """Release what the session holds (a JVM, a game process)."""
        ...


class Environment(Protocol):
    """Per-process state of one environment; opens sessions."""

    def splits(self) -> dict[str, list[int]]:
        """Item indices per split (``train``, ``test``, ...), each sorted."""
        ...

    def open_session(self, style: PromptStyle = "agentgym") -> Session:
        """A new session. ``style`` is the wording a client asked for (``POST /create``'s
        ``style``; AgentGym's clients send none and get AgentGym's): only an env whose server
        words the observations itself (babyai) reads it."""
        ...

    def privileged_state(self, index: int) -> str:
        """What a teacher may know about task ``index`` and the student may not."""
        ...


@dataclass(frozen=True)
class ActionKinds:
    """How an env sorts a recorded step into kinds of action, for eval's breakdown of what a
    policy did (webshop: search, open a result, choose an option, buy, ...).

    ``classify(page, action, candidates)`` reads only what an Episode's step holds: the text
    of the page the action was taken on, the action (empty for a reply with no action) and
    the candidate actions where the record has them; it answers one of ``names``, the kinds
    in the order a report lists them."""

    names: tuple[str, ...]
    classify: Callable[[str, str, list[str] | None], str]


@dataclass(frozen=True)
class EnvSpec:
    """What the rest of agentgym knows about an environment without importing its simulator.

    ``load`` imports the simulator package and builds the per-process ``Environment``
    (None for an env we only have a client for, such as WebArena); ``missing`` returns
    why the env cannot run on this machine (e.g. no ``java``), or None. ``probe_action`` is a
    harmless action that ``env check`` sends to servers that offer no expert.
    """

    name: str
    summary: str
    requires: str
    instruction: str
    max_rounds: int
    wire: WireFormat  # what its AgentGym server sends and takes (wire/format.py)
    default_port: int
    load: Callable[[], Environment] | None
    missing: Callable[[], str | None] = lambda: None
    probe_action: str = "look"
    categories: Callable[[int], str] | None = None  # item index -> task category, for eval
    # (session, commands, goal) -> the reset of a task given in AgentGym's /create body
    # (textcraft's client may send crafting commands and a goal); None: the env takes none
    custom_task: Callable[[Any, str, str], Transition] | None = None
    # item index -> what its records carry in ``meta`` (alfworld: ``generated``), as this
    # machine's settings see it; and a note `env list` adds to "ready".
    item_meta: Callable[[int], dict[str, Any]] | None = None
    note: Callable[[], str | None] = lambda: None
    # the simulator runs one call at a time per process (alfworld's engine holds a process-wide
    # lock): a command given no --env-server starts one built-in server per core
    serial_engine: bool = False
    # names the env's expert where its decisions changed (alfworld's searches what it has not
    # seen): kept in the settings of records it makes, so that records of another are not resumed
    expert: str | None = None
    # GET routes of AgentGym's server for the env beyond the common ones: path -> what a
    # session answers there (webshop's /available_actions, /instruction_text, /state)
    session_routes: dict[str, Callable[[Any], Any]] = field(default_factory=dict)
    # an env with no simulator here whose items are known all the same: split -> indices
    # (WebArena's 812 tasks)
    known_splits: Callable[[], dict[str, list[int]]] | None = None
    # the score (on the env's scale) that means the task is done, for a record that carries
    # no success flag (AgentGym's rule is reward == 1; sciworld scores 0-100)
    full_score: float = 1.0
    # a goal's name -> our index of the item that plays it: item ids may then name a goal,
    # "<env>/<goal>", the same task on every machine (textcraft's goal order follows a
    # directory listing in AgentGym)
    goal_index: Callable[[str], int] | None = None
    # a task's first observation -> our index of the item it states, or None: AgentGym's
    # records of the env get our id of their task (textcraft's states its goal)
    index_of_task: Callable[[str], int | None] | None = None
    # how the env sorts its steps into kinds of action (eval counts the steps of each kind);
    # None: it does not
    action_kinds: ActionKinds | None = None
    # the score is what papers report for the env, beside success (webshop's graded reward,
    # sciworld's 0-100): report prints the paired difference in score too
    score_reported: bool = False
    # the actions a page offers, read off its text, for an env whose wire steps send none
    # (webshop's: ``search[<keywords>]`` where there is a search bar, a click for each button);
    # what ``policy.actions: admissible`` maps a reply into
    page_actions: Callable[[str], list[str]] | None = None
    # the env's rule baseline (``--policy baseline``): the next action from the current
    # observation alone, to measure a learned policy beside (webshop's: search the goal's
    # words, click the first result, buy); None: the env has none
    baseline: Callable[[str], str] | None = None

    @property
    def lists_actions(self) -> bool:
        """Whether a state's admitted actions are known: sent by the server, or read off the
        page (what ``policy.actions`` other than free needs)."""
        return self.wire.lists_actions or self.page_actions is not None
