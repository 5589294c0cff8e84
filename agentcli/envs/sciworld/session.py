"""ScienceWorld: elementary-science tasks in a simulated house (over ``scienceworld``, a JVM).

Item ``sciworld_<i>`` is the i-th (task, variation) pair of AgentGym's list: the package's
tasks in their numbering order (1-1 boil, 1-2 melt, ...) without 5-x, 9-x and 10-x, each with
all its variations. That list and the package's train/dev/test variation split per task are
stored in ``data/sciworld_tasks.json`` so that listing items and splits needs no JVM.

A reset does what AgentGym's server does: load the task with no simplifications, read the
task description, then ``look around``. Every session owns one JVM (~1.5 s to start,
~190 MB); ``close()`` ends it.
"""

from __future__ import annotations

import bisect
import json
import logging
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.envs.actions import explain_by_verb
from agentcli.envs.base import PromptStyle, Transition
from agentcli.errors import EnvUnavailableError, TaskNotFoundError, UsageError

if TYPE_CHECKING:
    from scienceworld import ScienceWorldEnv

TASKS_FILE = Path(__file__).parents[1] / "data" / "sciworld_tasks.json"
SPLITS = ("train", "dev", "test")
# AgentGym loads tasks with the package default: no simplifications (doors start closed,
# no teleporting), so the same item shows the same world here and there.
SIMPLIFICATIONS = ""
# The package default, which AgentGym keeps: an episode ends after 100 simulator ticks
# (most actions take one tick, `wait` ten).
TICK_LIMIT = 100
RESET_ACTION = "look around"
SUCCESS_SCORE = 100
JVM_EXIT_TIMEOUT_S = 10
# The simulator keeps objects in hash sets, and its objects hash by identity, which HotSpot
# draws from a per-thread random sequence: the same item then lists its objects, and plans
# its gold path, differently depending on what the JVM did before (an earlier task, another
# py4j thread). A constant identity hash makes both depend on the item alone. Without perf
# data the JVM writes nothing to /tmp/hsperfdata_<user>.
JVM_OPTIONS = "-XX:+UnlockExperimentalVMOptions -XX:hashCode=2 -XX:-UsePerfData"


# The oracle teacher's reasons, by the verb of the gold action (first match wins).
REASONS = {
    "focus on ": "The {rest} is what the task is about, so I focus on it.",
    "go to ": "The next part of the task happens at the {rest}, so I go there.",
    "pick up ": "The task needs the {rest}, so I pick it up.",
    "open ": "I open the {rest} to reach what is inside.",
    "move ": "I move the {rest}, where the task needs it.",
    "pour ": "I pour the {rest}, where the task needs it.",
    "activate ": "I activate the {rest}: the task needs it running.",
    "deactivate ": "I deactivate the {rest}: the task no longer needs it running.",
    "connect ": "I connect the {rest} to close the circuit the task needs.",
    "wait": "I wait for the process I started to advance.",
    "look ": "I look to learn what is here before acting.",
}


@dataclass(frozen=True)
class Item:
    """One (task, variation) pair: what ``sciworld_<index>`` means."""

    task_id: str  # the package's task number, e.g. "1-1"
    task_name: str  # the package's task name, e.g. "boil"
    variation: int


class TaskTable:
    """AgentGym's flattened item list and the package's splits, read from the JSON file."""

    def __init__(self, tasks: list[dict[str, Any]]) -> None:
        self.tasks = tasks
        self._first_index: list[int] = []  # item index of each task's variation 0
        total = 0
        for task in tasks:
            self._first_index.append(total)
            total += task["variations"]
        self.size = total

    def item(self, index: int) -> Item:
        if not 0 <= index < self.size:
            raise TaskNotFoundError(
                f"sciworld has items 0-{self.size - 1}; got {index} "
                "(see `agentgym env list` for the splits)"
            )
        position = bisect.bisect_right(self._first_index, index) - 1
        task = self.tasks[position]
        variation = index - self._first_index[position]
        return Item(task["task_id"], task["task_name"], variation)

    def splits(self) -> dict[str, list[int]]:
        splits: dict[str, list[int]] = {split: [] for split in SPLITS}
        for first, task in zip(self._first_index, self.tasks, strict=True):
            for split in SPLITS:
                start, stop = task[split]
                splits[split].extend(range(first + start, first + stop))
        return splits


@cache
def task_table() -> TaskTable:
    try:
        tasks = json.loads(TASKS_FILE.read_text())["tasks"]
    except FileNotFoundError:
        raise EnvUnavailableError(
            f"sciworld's task list {TASKS_FILE} is missing: reinstall agentgym"
        ) from None
    return TaskTable(tasks)


def task_category(index: int) -> str:
    return task_table().item(index).task_name


def missing_requirement() -> str | None:
    if find_spec("scienceworld") is None:
        return "sciworld needs the scienceworld package: pip install scienceworld"
    if shutil.which("java") is None:
        return (
            "sciworld needs Java 8+ on PATH: run `make java` in a checkout, "
            "or apt-get install openjdk-17-jre-headless"
        )
    return None


class _LaunchOptions:
    """Adds options to ``JAVA_TOOL_OPTIONS`` while at least one JVM launch is in flight.

    The package starts java itself, with our environment: the only way to pass it options.
    Counting launches lets sessions start their JVMs in parallel, and the variable goes
    back to what it was once the last one is up.
    """

    VARIABLE = "JAVA_TOOL_OPTIONS"

    def __init__(self, options: str) -> None:
        self._options = options
        self._lock = threading.Lock()
        self._in_flight = 0
        self._inherited: str | None = None

    @contextmanager
    def applied(self) -> Iterator[None]:
        with self._lock:
            if self._in_flight == 0:
                inherited = self._inherited = os.environ.get(self.VARIABLE)
                os.environ[self.VARIABLE] = (
                    f"{inherited} {self._options}" if inherited else self._options
                )
            self._in_flight += 1
        try:
            yield
        finally:
            with self._lock:
                self._in_flight -= 1
                if self._in_flight == 0:
                    if self._inherited is None:
                        del os.environ[self.VARIABLE]
                    else:
                        os.environ[self.VARIABLE] = self._inherited


_launch_options = _LaunchOptions(JVM_OPTIONS)


def _start_simulator() -> ScienceWorldEnv:
    from scienceworld import ScienceWorldEnv

    with _launch_options.applied():
        return ScienceWorldEnv(envStepLimit=TICK_LIMIT)


def _stop_simulator(simulator: ScienceWorldEnv) -> None:
    # The package's close() asks the JVM to exit but does not wait for it, and keeps the
    # process handle only on its private gateway: wait here so no JVM outlives its session.
    process: subprocess.Popen = simulator._gateway.java_process
    # py4j logs its own shutdown, tracebacks included, at INFO: nothing for a user to act on
    logging.getLogger("py4j").setLevel(logging.WARNING)
    simulator.close()
    try:
        process.wait(timeout=JVM_EXIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _same_action(a: str, b: str) -> bool:
    return a.lower().split() == b.lower().split()


class SciWorldSession:
    """One JVM playing one episode at a time.

    The gold path is generated only when ``expert_action()`` first asks for it in an
    episode: generating it costs up to seconds (boiling tasks) and reloads the task, so the
    episode's actions are then replayed (the simulator is deterministic) to restore the state.
    """

    def __init__(self, table: TaskTable) -> None:
        self._table = table
        self._simulator = _start_simulator()
        self._item: Item | None = None
        self._actions: list[str] = []  # since the reset's "look around"
        self._gold: list[str] | None = None
        self._gold_position = 0  # gold actions taken so far, in order
        self._last: Transition | None = None
        self._task_description = ""
        self._closed = False

    def reset(self, index: int) -> Transition:
        item = self._table.item(index)
        self._simulator.load(item.task_name, item.variation, SIMPLIFICATIONS)
        task_description = self._simulator.get_task_description()
        observation, reward, done, info = self._simulator.step(RESET_ACTION)
        self._item, self._actions, self._gold, self._gold_position = item, [], None, 0
        self._task_description = task_description
        extra = {
            "task_name": item.task_name,
            "var_num": item.variation,
            "task_description": task_description,
        }
        self._last = _transition(observation, reward, done, info["score"], extra)
        return self._last

    def step(self, action: str) -> Transition:
        if self._last is None:
            raise UsageError("this sciworld session has no task yet: reset it to an item first")
        if self._last.done:
            return Transition(
                observation="The episode is over: reset to start another task.",
                score=self._last.score,
                done=True,
                success=self._last.success,
            )
        observation, reward, done, info = self._simulator.step(action)
        self._actions.append(action)
        self._follow_gold(action)
        self._last = _transition(observation, reward, done, info["score"])
        return self._last

    def expert_action(self) -> str | None:
        """The next gold action not yet taken, in order; None once the episode is over.

        The gold path is fixed at load time: after a detour that changed the world (say,
        the student moved the pot the path uses) its next step may no longer apply.
        """
        if self._item is None or self._last is None or self._last.done:
            return None
        if self._gold is None:
            self._gold = self._load_gold_path(self._item)
            self._replay_episode()
        if self._gold_position >= len(self._gold):
            return None
        return self._gold[self._gold_position]

    def explain(self, action: str) -> str:
        """The task, then what the gold path's next step does for it, by its verb."""
        return f"{self._task_description} {explain_by_verb(action, REASONS)}".strip()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            _stop_simulator(self._simulator)

    def _load_gold_path(self, item: Item) -> list[str]:
        self._simulator.load(item.task_name, item.variation, SIMPLIFICATIONS, generateGoldPath=True)
        return self._simulator.get_gold_action_sequence()

    def _replay_episode(self) -> None:
        self._simulator.step(RESET_ACTION)
        for action in self._actions:
            self._simulator.step(action)
            self._follow_gold(action)

    def _follow_gold(self, action: str) -> None:
        gold = self._gold
        position = self._gold_position
        if gold and position < len(gold) and _same_action(action, gold[position]):
            self._gold_position += 1


def _transition(
    observation: str, reward: int, done: bool, score: int, extra: dict[str, Any] | None = None
) -> Transition:
    # The package ends an episode on success, on failure (score -100, e.g. focusing on the
    # wrong object) and past the tick limit; only a full score is a success.
    return Transition(
        observation=observation,
        reward=float(reward),
        score=float(score),
        done=bool(done),
        success=score >= SUCCESS_SCORE,
        extra=extra or {},
    )


def _subgoals(progress: str) -> tuple[list[str], list[str]]:
    """Sequential and optional subgoal descriptions from the package's goal-progress table."""
    sequential: list[str] = []
    optional: list[str] = []
    current = None
    for line in progress.splitlines():
        if line.startswith("Sequential Subgoals"):
            current = sequential
        elif line.startswith("Unordered and Optional Subgoals"):
            current = optional
        elif current is not None:
            fields = line.split("\t")
            if len(fields) == 4:  # position, done flag, goal class, description
                current.append(fields[3].strip())
    return sequential, optional


def render_privileged_state(
    item: Item, task_description: str, gold: list[str], progress: str
) -> str:
    sequential, optional = _subgoals(progress)
    lines = [
        f"ScienceWorld task {item.task_id} ({item.task_name}), variation {item.variation}.",
        f"Task description: {task_description}",
    ]
    if sequential:
        lines.append("Subgoals the score follows, in order:")
        lines.extend(f"- {goal}" for goal in sequential)
    if optional:
        lines.append("Optional subgoals that also earn score:")
        lines.extend(f"- {goal}" for goal in optional)
    lines.append(f"A gold action sequence that completes the task from the start ({len(gold)}):")
    lines.extend(f"{number}. {action}" for number, action in enumerate(gold, start=1))
    return "\n".join(lines)


class SciWorldEnvironment:
    """The item table, plus one JVM started on first use to answer ``privileged_state``."""

    def __init__(self, table: TaskTable) -> None:
        self._table = table
        self._oracle: ScienceWorldEnv | None = None
        self._oracle_lock = threading.Lock()

    def splits(self) -> dict[str, list[int]]:
        return self._table.splits()

    def open_session(self, style: PromptStyle = "agentgym") -> SciWorldSession:
        # the simulator words the observations: one wording for either style
        return SciWorldSession(self._table)

    def privileged_state(self, index: int) -> str:
        item = self._table.item(index)
        with self._oracle_lock:
            if self._oracle is None:
                self._oracle = _start_simulator()
            oracle = self._oracle
            oracle.load(item.task_name, item.variation, SIMPLIFICATIONS, generateGoldPath=True)
            description = oracle.get_task_description()
            gold = oracle.get_gold_action_sequence()
            progress = oracle.get_goal_progress()
        return render_privileged_state(item, description, gold, progress)


def load_environment() -> SciWorldEnvironment:
    reason = missing_requirement()
    if reason:
        raise EnvUnavailableError(reason)
    return SciWorldEnvironment(task_table())
