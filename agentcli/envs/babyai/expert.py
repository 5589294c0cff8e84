"""The BabyAI expert: minigrid's BabyAI bot, kept in step with a session and folded into our
actions (see ``BotExpert``)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from agentcli.envs.babyai.text import (
    DROP,
    FORWARD,
    LEFT,
    PICKUP,
    RIGHT,
    TOGGLE,
    WAIT,
    View,
    facing_cell,
    objects_by_cell,
    plan_to_face,
)


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


class BotExpert:
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
            if finish in view.plans and self.completes(view.plans[finish]):
                offer(finish, len(steps))
        return best

    def completes(self, plan: tuple[int, ...]) -> bool:
        """Whether running ``plan`` from here ends the episode in success (tried on a copy)."""
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
