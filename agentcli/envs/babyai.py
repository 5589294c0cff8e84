"""BabyAI as a text environment: AgentGym's 40 minigrid levels, our text, minigrid's bot as expert.

Item ``i`` is level ``LEVELS[i % 40]`` generated with seed ``i // 40``: the task AgentGym's server
builds for ``babyai_<i>``. Any non-negative index is a task. The agent reads our rendering of its
7x7 view (``babyai_text``) and acts with AgentGym's action forms; "go to", "pick up" and the door
actions run as several primitive minigrid steps.

minigrid prints "Sampling rejected: ..." on stdout while it retries a layout; stdout carries our
results, so level generation runs with stdout captured, under a lock (swapping ``sys.stdout`` from
two threads at once could leave it captured for good).
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import io
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentcli.envs.babyai_text import (
    DROP,
    FORWARD,
    LEFT,
    PICKUP,
    RIGHT,
    TOGGLE,
    WAIT,
    View,
    describe_layout,
    facing_cell,
    mission_objects,
    object_name,
    objects_by_cell,
    out_of_sight,
    plan_to_face,
    read_view,
    relative_position,
)
from agentcli.envs.base import EnvSpec, Transition
from agentcli.errors import EnvUnavailableError, TaskNotFoundError

# AgentGym's level list (agentenv-babyai), in its order. AgentGym names "BabyAI-GoToObjS6-v0",
# which minigrid 3.x registers only as "-v1" (the same GoToObj level with a 6x6 room).
LEVELS = (
    "BabyAI-GoToRedBallGrey-v0",
    "BabyAI-GoToRedBall-v0",
    "BabyAI-GoToRedBallNoDists-v0",
    "BabyAI-GoToObjS6-v1",
    "BabyAI-GoToLocalS8N7-v0",
    "BabyAI-GoToObjMazeS7-v0",
    "BabyAI-GoToImpUnlock-v0",
    "BabyAI-GoToSeqS5R2-v0",
    "BabyAI-GoToRedBlueBall-v0",
    "BabyAI-GoToDoor-v0",
    "BabyAI-GoToObjDoor-v0",
    "BabyAI-Open-v0",
    "BabyAI-OpenRedDoor-v0",
    "BabyAI-OpenDoorLoc-v0",
    "BabyAI-OpenRedBlueDoorsDebug-v0",
    "BabyAI-OpenDoorsOrderN4Debug-v0",
    "BabyAI-Pickup-v0",
    "BabyAI-UnblockPickup-v0",
    "BabyAI-PickupLoc-v0",
    "BabyAI-PickupDistDebug-v0",
    "BabyAI-PickupAbove-v0",
    "BabyAI-PutNextLocalS6N4-v0",
    "BabyAI-PutNextS7N4Carrying-v0",
    "BabyAI-Unlock-v0",
    "BabyAI-UnlockLocalDist-v0",
    "BabyAI-KeyInBox-v0",
    "BabyAI-UnlockPickupDist-v0",
    "BabyAI-BlockedUnlockPickup-v0",
    "BabyAI-UnlockToUnlock-v0",
    "BabyAI-ActionObjDoor-v0",
    "BabyAI-FindObjS7-v0",
    "BabyAI-KeyCorridorS6R3-v0",
    "BabyAI-OneRoomS20-v0",
    "BabyAI-MoveTwoAcrossS8N9-v0",
    "BabyAI-SynthS5R2-v0",
    "BabyAI-SynthLoc-v0",
    "BabyAI-SynthSeq-v0",
    "BabyAI-MiniBossLevel-v0",
    "BabyAI-BossLevel-v0",
    "BabyAI-BossLevelNoUnlock-v0",
)

PUT_NEXT = "BabyAI-PutNextLocalS6N4-v0"

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

_GENERATION_LOCK = threading.Lock()


@dataclass(frozen=True)
class Variant:
    """What a BabyAI env serves: the level and seed of each item, its splits, and whether the
    agent sees the whole room (``room_view``).

    Item ``i`` is level ``levels[i % len(levels)]`` with seed ``i // len(levels)``. With
    ``room_view`` the observation also lists every object out of sight and the expert plans
    from the whole grid, not from its memory of what it explored: its advice is then a
    function of what the agent reads, so a student can learn it (the bot's own memory is
    invisible to the student, which makes its corrections noise to a student of a
    partially observed level).
    """

    name: str
    levels: tuple[str, ...]
    splits: Mapping[str, range]
    room_view: bool = False

    def level_of(self, index: int) -> tuple[str, int]:
        """The minigrid level id and seed of item ``index``."""
        if index < 0:
            raise TaskNotFoundError(f"{self.name} item {index} does not exist: indices start at 0.")
        return self.levels[index % len(self.levels)], index // len(self.levels)

    def category(self, index: int) -> str:
        """``GoToRedBall``: the level's name without the ``BabyAI-`` prefix and version."""
        return self.level_of(index)[0].removeprefix("BabyAI-").rsplit("-", 1)[0]


# AgentGym's babyai: its 40 levels in turn, seeds 0-1 of each as test, 2-21 as train.
AGENTGYM_LEVELS = Variant(
    "babyai",
    LEVELS,
    {"train": range(2 * len(LEVELS), 22 * len(LEVELS)), "test": range(0, 2 * len(LEVELS))},
)
# One room, "put the X next to the Y", fully observed: item i is seed i. Test seeds are few
# and fixed (the first 500); training seeds start at 1000, enough for many iterations.
PUT_NEXT_ROOM = Variant(
    "babyai-putnext",
    (PUT_NEXT,),
    {"train": range(1000, 21000), "test": range(0, 500)},
    room_view=True,
)


def _new_level(level: str) -> Any:
    import gymnasium
    import minigrid  # noqa: F401  (importing minigrid registers the BabyAI levels)

    return gymnasium.make(level).unwrapped


def _generate(env: Any, seed: int) -> None:
    with _GENERATION_LOCK, contextlib.redirect_stdout(io.StringIO()):
        env.reset(seed=seed)


class BabyAIEnvironment:
    def __init__(self, variant: Variant) -> None:
        self._variant = variant

    def splits(self) -> dict[str, list[int]]:
        return {name: list(items) for name, items in self._variant.splits.items()}

    def open_session(self) -> BabyAISession:
        return BabyAISession(self._variant)

    def privileged_state(self, index: int) -> str:
        level, seed = self._variant.level_of(index)
        env = _new_level(level)
        _generate(env, seed)
        return describe_layout(env, f"{level}, seed {seed}")


class BabyAISession:
    """One episode at a time; keeps one minigrid env per level it has played."""

    def __init__(self, variant: Variant) -> None:
        self._variant = variant
        self._levels: dict[str, Any] = {}
        self._env: Any = None
        self._view: View | None = None
        self._expert: _BotExpert | None = None
        self._outcome: str | None = None  # set when the episode ends: what to tell the agent
        self._success = False
        self._score = 0.0
        self._actions: list[str] = []  # as the agent wrote them, done or refused

    def reset(self, index: int) -> Transition:
        level, seed = self._variant.level_of(index)
        if level not in self._levels:
            self._levels[level] = _new_level(level)
        self._env = self._levels[level]
        _generate(self._env, seed)
        self._outcome, self._success, self._score = None, False, 0.0
        self._actions = []
        self._expert = _BotExpert(self._env, omniscient=self._variant.room_view)
        self._view = read_view(self._env)
        self._expert.recover(self._view)
        return self._transition(self._goal(), 0.0)

    def step(self, action: str) -> Transition:
        if self._view is None:
            return Transition(observation="No episode is running: reset first.")
        if self._outcome is not None:
            return self._transition("The episode is over: reset to start another.", 0.0)
        command = _normalize(action, self._view)
        self._actions.append(" ".join(action.split()))
        plan = self._view.plans.get(command)
        if plan is None:
            why = self._view.refusals.get(
                command, f'"{action.strip()}" is not an available action.'
            )
            return self._transition(why, 0.0)
        front, carried = self._env.grid.get(*self._env.front_pos), self._env.carrying
        reward, steps_done = self._execute(plan)
        self._view = read_view(self._env)
        if self._outcome is None:
            self._expert.recover(self._view)
        # an episode that ends half-way through a plan gets only its outcome line
        lead = _feedback(command, front, carried) if steps_done == len(plan) else ""
        return self._transition(lead, reward)

    def expert_action(self) -> str | None:
        if self._expert is None or self._outcome is not None:
            return None
        return self._expert.action(self._view)

    def explain(self, action: str) -> str:
        """The mission, then where the object the action is about stands from the agent; only
        objects the agent knows of are named (in view, or anywhere in the room with
        ``room_view``): the bot also plans from its memory, which a reason must not reveal."""
        view, env = self._view, self._env
        mission = f"My mission: {env.mission}."
        command = _normalize(action, view)
        if command == "drop" and env.carrying is not None:
            return f"{mission} I put the {object_name(env.carrying)} down in front of me."
        if command == "toggle":
            front = view.names.get(facing_cell(view.pose), "thing")
            return f"{mission} The {front} is right in front of me, so I toggle it."
        for verb, purpose in _ACTION_PURPOSES.items():
            name = command.removeprefix(verb)
            cell = _cell_named(view, name) if command.startswith(verb) else None
            if cell is not None:
                where = relative_position(view.pose, cell)
                return f"{mission} The {name} is {where}, so I {purpose}."
        targets = {id(obj) for obj in mission_objects(env)}
        if self._variant.room_view:  # the agent knows where everything is
            known = {cell: object_name(obj) for cell, obj in objects_by_cell(env).items()}
            known |= view.names
        else:
            known = view.names
        (x, y), _ = view.pose
        needed = sorted(
            ((name, cell) for cell, name in known.items() if id(env.grid.get(*cell)) in targets),
            key=lambda named: abs(named[1][0] - x) + abs(named[1][1] - y),
        )
        move = command if command in _MOVES else "move"
        if needed:
            name, cell = needed[0]
            where = relative_position(view.pose, cell)
            return f"{mission} The {name} is {where}; I {move} to work my way towards it."
        return f"{mission} Nothing my mission needs is in view, so I {move} to look for it."

    def close(self) -> None:
        self._levels.clear()
        self._env = self._view = self._expert = None

    def _execute(self, plan: tuple[int, ...]) -> tuple[float, int]:
        """Run a plan's primitive steps until it ends or the episode does: (reward, steps run)."""
        total = 0.0
        for done_steps, primitive in enumerate(plan, start=1):
            _, reward, terminated, truncated, _ = self._env.step(primitive)
            total += float(reward)
            self._expert.observe(primitive)
            if terminated or truncated:
                self._success = bool(terminated and reward > 0)
                self._score = float(reward) if self._success else 0.0
                if self._success:
                    self._outcome = "You completed the mission."
                elif terminated:
                    self._outcome = "You failed the mission."
                else:
                    self._outcome = "You ran out of time: the step limit is reached."
                return total, done_steps
        return total, len(plan)

    def _goal(self) -> str:
        return f"Your goal: {self._env.mission}"

    def _transition(self, lead: str, reward: float) -> Transition:
        # with the whole room in view, the state itself says what an action did (and the
        # last actions line that it was refused); a line only a refusal writes would be
        # text a student never meets in expert demos
        lines = [lead] if lead and not self._variant.room_view else []
        if self._outcome is not None:
            lines.append(self._outcome)
        if self._variant.room_view:
            # every observation is the whole state (the goal, the view, the rest of the room)
            # and the last two actions, so that a policy needs no history; the instruction
            # names the action forms and the view the objects' ids
            recent = ", ".join(self._actions[-2:]) or "none"
            lines += [
                self._goal(),
                self._view.scene,
                out_of_sight(self._env, self._view),
                f"Your last actions: {recent}",
            ]
        else:
            lines.append(self._view.scene)
            if self._outcome is None:
                lines.append(self._view.actions_line())
        actions = list(self._view.plans) if self._outcome is None else []
        return Transition(
            observation="\n".join(lines),
            reward=reward,
            score=self._score,
            done=self._outcome is not None,
            success=self._success,
            available_actions=actions,
        )


# What each of our object actions does, as a reason ends it ("..., so I go to it").
_ACTION_PURPOSES = {
    "toggle and go through ": "open it and step into its doorway",
    "go through ": "step into its doorway",
    "pick up ": "pick it up",
    "go to ": "go to it",
}
_MOVES = ("turn left", "turn right", "move forward")


def _cell_named(view: View, name: str) -> tuple[int, int] | None:
    return next((cell for cell, named in view.names.items() if named == name), None)


def _normalize(action: str, view: View) -> str:
    """Lower-case, single spaces, no closing period or quotes; accept AgentGym's "pickup"."""
    command = " ".join(action.lower().replace('"', " ").replace("'", " ").split()).strip(" .")
    if command.startswith("pickup "):
        command = "pick up " + command.removeprefix("pickup ")
    numbered = f"{command} 1"
    if command not in view.plans and (numbered in view.plans or numbered in view.refusals):
        command = numbered  # "go to red ball" means the nearest one
    return command


def _feedback(command: str, front: Any, carried: Any) -> str:
    """One line on what the action did, from the objects it touched (minigrid mutates them)."""
    target = command.rsplit(" ", 1)[0]
    for state in (" open door", " closed door", " locked door"):
        target = target.replace(state, " door")
    simple = {
        "turn left": "You turned left.",
        "turn right": "You turned right.",
        "move forward": "You moved forward.",
    }
    if command in simple:
        return simple[command]
    if command == "drop":
        return f"You dropped the {object_name(carried)}."
    if command == "toggle":
        if front.type == "box":
            found = f"a {object_name(front.contains)}" if front.contains else "nothing"
            return f"You opened the {front.color} box and found {found}."
        return f"You toggled the {front.color} door: it is now {object_name(front).split()[1]}."
    for verb, past in (
        ("toggle and go through ", "You opened the {} and stepped into its doorway."),
        ("go through ", "You stepped into the doorway of the {}."),
        ("pick up ", "You picked up the {}."),
    ):
        if target.startswith(verb):
            return past.format(target.removeprefix(verb))
    return f"You are facing the {target.removeprefix('go to ')}."


@dataclass(frozen=True)
class _Step:
    """One primitive step of the bot's look-ahead."""

    action: int
    acted_on: tuple[int, int]  # the cell in front of the agent when it acted
    pose: tuple[tuple[int, int], int]  # after the step
    completed: bool  # the mission succeeded on this step


class _BoundedPlan(list):
    """The bot's stack of subgoals, with a depth limit.

    When the bot finds no path to the place it wants to explore, its ``replan`` can push
    "explore" and "go next to" subgoals in turn forever and never return. No real plan is
    anywhere near this deep, so reaching the limit means the bot is lost: appending raises,
    and the expert treats it like any other crash of the bot.
    """

    LIMIT = 200

    def append(self, subgoal: Any) -> None:
        if len(self) >= self.LIMIT:
            raise RuntimeError("the BabyAI bot's plan keeps growing: it is lost")
        super().append(subgoal)


class _BotExpert:
    """minigrid's BabyAIBot, kept in step with the session and folded into our actions.

    The bot plans from its memory of what it has seen, so it watches every primitive step of the
    episode, whoever chose it (``observe``). Its advice is one primitive step; to fit AgentGym's
    20 rounds we look ahead by running a copy of the bot, and answer with the one of our
    actions whose plan is exactly the bot's next steps, the longest such (see
    ``_covering_action``), else the bot's next step itself.

    The bot fails on some states: it asserts (an object carried from the start, a key hidden in
    a box, an off-plan move it cannot undo) or its plan grows without end. Replaying the episode
    into a new bot would fail the same way, so we start a new bot from the current state with
    the old bot's map of seen cells. While none can start, our own steps (``_unblock``) lead to
    a state it can start from; failing that, a bot starts once with a blank map. After
    ``MAX_FAILURES`` failures of a running bot, or when nothing applies, there is no expert
    action (None).

    Restarts happen after each step (``recover``), never when asked for advice: ``action`` has
    no side effects, so the expert's state is a function of the episode's actions alone, and
    asking along the way gives the answers a fresh replay of the same actions would (the
    oracle teacher relies on this to label a student's states in one pass).
    """

    LOOKAHEAD = 24  # primitive steps: more than any plan within the 7x7 view takes
    MAX_FAILURES = 3  # of a running bot, per episode: beyond, restarts only repeat the failure

    def __init__(self, env: Any, *, omniscient: bool = False):
        self._env = env
        self._bot: Any = None
        self._advice: int | None = None  # the bot's next primitive action from this state
        self._seen = None  # the last bot's map of seen cells
        self._failures = 0
        self._forgot = False  # whether a bot has started with a blank map (once at most)
        self._start(self._whole_grid() if omniscient else None)

    def observe(self, primitive: int) -> None:
        if self._bot is None:
            return
        try:
            self._advice = self._bot.replan(primitive)
        except Exception:  # the bot asserts on states its plan cannot handle
            self._seen, self._bot = self._bot.vis_mask.copy(), None
            self._failures += 1

    def recover(self, view: View) -> None:
        """After a step: start a new bot if the last one failed and one can start here."""
        if self._bot is not None or self._failures > self.MAX_FAILURES:
            return
        if self._start(self._seen) or self._forgot or self._unblock(view) is not None:
            return
        self._forgot = True
        self._start()

    def action(self, view: View) -> str | None:
        """The expert's next action; changes nothing (look-aheads run on copies)."""
        if self._bot is None:
            return None if self._failures > self.MAX_FAILURES else self._unblock(view)
        return self._covering_action(view, self._look_ahead()) or self._spell(view, self._advice)

    def _whole_grid(self) -> Any:
        import numpy as np

        return np.ones((self._env.width, self._env.height), dtype=bool)

    def _start(self, memory: Any = None) -> bool:
        """Start a bot from the current state, seeding its map of seen cells with ``memory``."""
        if self._env.carrying is not None:  # the bot plans every pick-up with empty hands
            return False
        from minigrid.utils.baby_ai_bot import BabyAIBot

        bot = BabyAIBot(self._env)
        bot.stack = _BoundedPlan(bot.stack)
        if memory is not None:
            bot.vis_mask |= memory
        try:
            self._advice = bot.replan()
        except Exception:
            self._seen = bot.vis_mask.copy()
            return False
        self._bot = bot
        return True

    def _unblock(self, view: View) -> str | None:
        """Our own step towards a state the bot can start from, or None.

        In order: open a locked door with the key in hand; put anything else down (the bot
        plans every pick-up with empty hands); open a box that holds a key; fetch the key of a
        locked door. The bot cannot do the last two itself: it never looks inside boxes, and it
        insists on the nearest locked door even when that door's key lies behind another.
        """
        carried = self._env.carrying
        objects = objects_by_cell(self._env)
        locked = [cell for cell, obj in objects.items() if obj.type == "door" and obj.is_locked]
        if carried is not None:
            for door in locked:
                if carried.type == "key" and objects[door].color == carried.color:
                    step = self._walk_to(view, door, "toggle")
                    if step is not None:
                        return step
            return "drop" if "drop" in view.plans else "turn left"
        for cell, obj in objects.items():
            if getattr(obj.contains if obj.type == "box" else None, "type", "") == "key":
                step = self._walk_to(view, cell, "toggle")
                if step is not None:
                    return step
        for door in locked:
            if plan_to_face(self._env, door) is None:  # its key would be carried to and fro
                continue
            for cell, obj in objects.items():
                if obj.type == "key" and obj.color == objects[door].color:
                    step = self._walk_to(view, cell, "pick up")
                    if step is not None:
                        return step
        return None

    def _walk_to(self, view: View, cell: tuple[int, int], verb: str) -> str | None:
        """Our next action to ``verb`` ("toggle" or "pick up") the object at ``cell``."""
        name = view.names.get(cell)
        if verb == "toggle" and cell == facing_cell(view.pose):
            return "toggle" if "toggle" in view.plans else None
        if name is not None:
            command = f"pick up {name}" if verb == "pick up" else f"go to {name}"
            return command if command in view.plans else None
        plan = plan_to_face(self._env, cell)  # out of sight: walk with the whole map
        return self._spell(view, plan[0]) if plan else None

    def _look_ahead(self) -> list[_Step]:
        env, bot = copy.deepcopy((self._env, self._bot))
        action, steps = self._advice, []
        for _ in range(self.LOOKAHEAD):
            acted_on = tuple(int(v) for v in env.front_pos)
            _, reward, terminated, truncated, _ = env.step(action)
            pose = (tuple(int(v) for v in env.agent_pos), int(env.agent_dir))
            steps.append(_Step(int(action), acted_on, pose, bool(terminated and reward > 0)))
            # stop one step past the first interaction: it shows whether a toggle led inside
            interactions = [step.action not in (LEFT, RIGHT, FORWARD) for step in steps]
            if terminated or truncated or any(interactions[:-1]):
                break
            try:
                action = bot.replan(action)
            except Exception:
                break
        return steps

    def _covering_action(self, view: View, steps: list[_Step]) -> str | None:
        """Our action that does the most of the bot's next steps (at least two), or None.

        An action must do exactly the bot's steps: the bot reads any other move as a detour
        to undo (it would close a door we opened on another route). Only the step that
        completes the mission may be reached by another route, as nothing follows it; a trial
        run on a copy of the env checks that it does complete it.
        """
        best, covered = None, 1

        def offer(command: str, count: int) -> None:
            nonlocal best, covered
            if command in view.plans and count > covered:
                best, covered = command, count

        bot_actions = tuple(step.action for step in steps)
        for command, plan in view.plans.items():
            if plan != (WAIT,) and bot_actions[: len(plan)] == plan:
                offer(command, len(plan))
        last = steps[-1]
        if last.completed:
            if last.action == PICKUP:
                finish = f"pick up {view.names.get(last.acted_on)}"
            elif last.action == TOGGLE:
                finish = f"toggle and go through {view.names.get(last.acted_on)}"
            else:
                finish = f"go to {view.names.get(facing_cell(last.pose))}"
            # the bot's earlier steps may do part of the mission ("go to A, then go to B")
            if finish in view.plans and self._completes(view.plans[finish]):
                offer(finish, len(steps))
        return best

    def _completes(self, plan: tuple[int, ...]) -> bool:
        env = copy.deepcopy(self._env)
        for primitive in plan:
            _, reward, terminated, truncated, _ = env.step(primitive)
            if terminated or truncated:
                return bool(terminated and reward > 0)
        return False

    def _spell(self, view: View, primitive: int | None) -> str | None:
        """The bot's primitive action as one of our actions, if it is available here."""
        front = view.names.get(facing_cell(view.pose), "")
        command = {
            LEFT: "turn left",
            RIGHT: "turn right",
            FORWARD: "move forward",
            PICKUP: f"pick up {front}",
            DROP: "drop",
            TOGGLE: "toggle",
            WAIT: f"go to {front}",  # the bot says "done" when it believes the goal is met
        }.get(primitive)
        return command if command in view.plans else None


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
        wire="babyai",
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
