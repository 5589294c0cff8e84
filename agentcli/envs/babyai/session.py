"""A BabyAI episode played in text, in our words (``environment`` opens these sessions).

The agent reads our rendering of its 7x7 view (``text``) and acts with AgentGym's action forms;
"go to", "pick up" and the door actions run as several primitive minigrid steps. The expert is
minigrid's bot (``expert``), which watches every primitive step the session runs.
"""

from __future__ import annotations

from typing import Any

from agentcli.envs.babyai.expert import BotExpert
from agentcli.envs.babyai.levels import Variant, generate, new_level
from agentcli.envs.babyai.text import (
    View,
    facing_cell,
    mission_objects,
    object_name,
    objects_by_cell,
    out_of_sight,
    read_view,
    relative_position,
)
from agentcli.envs.base import Transition


class BabyAISession:
    """One episode at a time; keeps one minigrid env per level it has played."""

    def __init__(self, variant: Variant) -> None:
        self._variant = variant
        self._levels: dict[str, Any] = {}
        self._env: Any = None
        self._view: View | None = None
        self._expert: BotExpert | None = None
        self._outcome: str | None = None  # set when the episode ends: what to tell the agent
        self._success = False
        self._score = 0.0
        self._actions: list[str] = []  # as the agent wrote them, done or refused

    def reset(self, index: int) -> Transition:
        self._begin(index)
        return self._transition(self._goal(), 0.0)

    def _begin(self, index: int) -> None:
        """Lay out item ``index``'s level and seed, and start its episode and its expert."""
        level, seed = self._variant.level_of(index)
        if level not in self._levels:
            self._levels[level] = new_level(level)
        self._env = self._levels[level]
        generate(self._env, seed)
        self._outcome, self._success, self._score = None, False, 0.0
        self._actions = []
        self._expert = BotExpert(self._env, omniscient=self._variant.room_view)
        self._view = read_view(self._env)
        self._expert.recover(self._view)

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
