"""BabyAI as AgentGym's server words it: its description of what the agent sees, its action
set with the primitive steps behind each action, and its refusals.

Rewritten from reading ``postprocess_obs`` and ``find_path`` in agentenv-babyai's
``environment.py`` (AgentGym 3ef9235), quirks kept, since a model trained on AgentGym's data
read exactly this: objects are listed nearest first (Manhattan distance; ties in the order its
scan of the 7x7 view meets them, farthest row first) as "There is a <name> <n> <where>. " with
two spaces after each; "n steps" even for one; walls are left out of the list but stop paths,
and the nearest box or wall straight ahead is "facing"; paths are found over the cells of the
view (doors, even locked ones, do not block them), numbered per name among the objects a path
reaches; a refusal of a closed door without a path names the door counts (a dict) where its
number belongs. ``pickup`` is one word, and "check available actions" lists the actions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentcli.envs.babyai.text import DIRECTION_VECTORS, DROP, FORWARD, LEFT, PICKUP, RIGHT, TOGGLE

# minigrid's encoding of a cell (minigrid.core.constants), as AgentGym's server spells it.
_OBJECTS = ("unseen", "empty", "wall", "floor", "door", "key", "ball", "box", "goal", "lava")
_COLORS = ("red", "green", "blue", "purple", "yellow", "grey")
_STATES = ("open", "closed", "locked")
_LISTED = ("door", "key", "ball", "box", "goal", "lava", "wall")
_BLOCKING = ("wall", "box", "lava", "ball", "key")  # what a path cannot cross

CHECK = "check available actions"

Cell = tuple[int, int]


@dataclass(frozen=True)
class _Seen:
    name: str  # "red ball", "blue locked door", "grey wall"
    cell: Cell
    distance: int  # Manhattan, from the agent


@dataclass(frozen=True)
class AgentGymView:
    """What AgentGym's server tells the agent now, and what each of its actions would do."""

    description: str
    plans: dict[str, list[int]]  # action -> primitive steps, in AgentGym's order
    refusals: dict[str, str]  # action -> why it cannot be taken now

    def actions_text(self) -> str:
        """The line its server appends to every observation."""
        return "\nAvailable actions: [" + ", ".join(f'"{name}"' for name in self.plans) + "]"


def read_agentgym_view(env: Any) -> AgentGymView:
    """The view of a minigrid env's agent, as AgentGym's server describes it."""
    obs = env.gen_obs()
    image, direction = obs["image"], int(obs["direction"])
    size = env.agent_view_size
    pos = (int(env.agent_pos[0]), int(env.agent_pos[1]))
    fx, fy = DIRECTION_VECTORS[direction]
    rx, ry = DIRECTION_VECTORS[(direction + 1) % 4]
    # the view's far-left corner, and the absolute cells its rows and columns span
    left_x = pos[0] + fx * (size - 1) - rx * (size // 2)
    left_y = pos[1] + fy * (size - 1) - ry * (size // 2)
    xs = _span(left_x, left_x + size * (rx - fx))
    ys = _span(left_y, left_y + size * (ry - fy))

    seen: list[_Seen] = []
    barriers: list[tuple[str, int]] = []  # (box or wall, steps ahead) straight ahead
    for row in range(size):
        for column in range(size):
            x, y = left_x - fx * row + rx * column, left_y - fy * row + ry * column
            distance = abs(pos[0] - x) + abs(pos[1] - y)
            if x < 0 or y < 0 or distance == 0:
                continue
            kind, color, state = (int(value) for value in image[column, row])
            kind_name = _OBJECTS[kind]
            if kind_name in _LISTED:
                shown = f"{_STATES[state]} door" if kind_name == "door" else kind_name
                name = f"{_COLORS[color]} {shown}"
                seen.append(_Seen(name, (x, y), distance))
            if kind_name in ("box", "wall"):
                dx, dy = x - pos[0], y - pos[1]
                if fx * dy - fy * dx == 0:  # on the agent's line of sight
                    barriers.append((kind_name, fx * dx + fy * dy))
    seen.sort(key=lambda thing: thing.distance)
    barriers.sort(key=lambda barrier: barrier[1])

    description = (
        _objects_text(seen, pos, (fx, fy), (rx, ry))
        + _barrier_text(barriers)
        + _carrying_text(env.carrying)
    )
    paths = _Paths(pos, direction, seen, xs, ys)
    plans, refusals = _actions(env.carrying, pos, (fx, fy), seen, barriers, paths)
    return AgentGymView(description, plans, refusals)


def _span(start: int, border: int) -> range:
    return range(border, start + 1) if border < start else range(start, border)


def _objects_text(seen: list[_Seen], pos: Cell, ahead: Cell, right: Cell) -> str:
    if not seen:
        return "You cannot see any objects within sight."
    text = "In front of you in this room, you can see several objects: "
    counts: dict[str, int] = {}
    for thing in seen:
        if "wall" in thing.name:
            continue
        dx, dy = thing.cell[0] - pos[0], thing.cell[1] - pos[1]
        front, side = ahead[0] * dx + ahead[1] * dy, right[0] * dx + right[1] * dy
        if side == 0:
            where = f"right in front of you {front} steps away. "
        elif side > 0:
            where = f"{front} steps in front of you and {side} steps to your right. "
        else:
            where = f"{front} steps in front of you and {-side} steps to your left. "
        counts[thing.name] = counts.get(thing.name, 0) + 1
        text += f"There is a {thing.name} {counts[thing.name]} {where} "
    return text


def _barrier_text(barriers: list[tuple[str, int]]) -> str:
    text = "The room has walls around you. "
    if barriers:
        kind, steps = barriers[0]
        text += f"You are facing a {kind} {steps} steps away. "
    return text


def _carrying_text(carrying: Any) -> str:
    if carrying is None:
        return "You are not carrying anything."
    return f"You are carrying a {carrying.color} {carrying.type}."


class _Paths:
    """AgentGym's breadth-first search over the view's cells: forward, left, right in that
    order; a pose is closed once taken off the queue, and a pose queued twice keeps the later
    of its parents."""

    def __init__(self, pos: Cell, direction: int, seen: list[_Seen], xs: range, ys: range):
        self._start = (pos, direction)
        self._blocked = {
            thing.cell for thing in seen if any(kind in thing.name for kind in _BLOCKING)
        }
        self._xs, self._ys = xs, ys

    def to(self, goal: Cell, *, arrive: bool) -> list[int] | None:
        """The steps to stand on ``goal`` (``arrive``) or to face it; None when none leads."""
        parents: dict[tuple[Cell, int], tuple[tuple[Cell, int], int]] = {}
        closed: set[tuple[Cell, int]] = set()
        queue = [self._start]
        while queue:
            pose = queue.pop(0)
            closed.add(pose)
            (x, y), direction = pose
            dx, dy = DIRECTION_VECTORS[direction]
            if (x, y) == goal if arrive else (goal[0] - x, goal[1] - y) == (dx, dy):
                return self._walk_back(parents, pose)
            for action in (FORWARD, LEFT, RIGHT):
                following = _after(pose, action)
                (nx, ny), _ = following
                if (
                    nx in self._xs
                    and ny in self._ys
                    and following not in closed
                    and (nx, ny) not in self._blocked
                ):
                    queue.append(following)
                    parents[following] = (pose, action)
        return None

    def _walk_back(self, parents: dict, pose: tuple[Cell, int]) -> list[int]:
        steps = []
        while pose != self._start:
            pose, action = parents[pose]
            steps.append(action)
        return steps[::-1]


def _after(pose: tuple[Cell, int], action: int) -> tuple[Cell, int]:
    (x, y), direction = pose
    if action == LEFT:
        return (x, y), (direction - 1) % 4
    if action == RIGHT:
        return (x, y), (direction + 1) % 4
    dx, dy = DIRECTION_VECTORS[direction]
    return (x + dx, y + dy), direction


def _actions(carrying, pos, ahead, seen, barriers, paths: _Paths):
    plans: dict[str, list[int]] = {"turn left": [LEFT], "turn right": [RIGHT]}
    refusals: dict[str, str] = {}
    if not barriers or barriers[0][1] > 1:
        plans["move forward"] = [FORWARD]
    else:
        refusals["move forward"] = "There is a barrier in front of you, you can't move forward."

    if carrying is None:
        carriable = [t for t in seen if not any(k in t.name for k in ("wall", "door", "goal"))]
        _numbered("pickup", carriable, paths, plans, refusals, then=[PICKUP])

    if carrying is not None:
        front = (pos[0] + ahead[0], pos[1] + ahead[1])
        if any(t.cell == front and any(k in t.name for k in _BLOCKING) for t in seen):
            refusals["drop"] = (
                "You cannot drop the object, as there is already an object in front of you."
            )
        else:
            plans["drop"] = [DROP]
    else:
        refusals["drop"] = "You cannot drop the object, as you are not carrying anything."

    _door_actions(carrying, seen, paths, plans, refusals)

    for thing in seen:
        if "goal" in thing.name:
            path = paths.to(thing.cell, arrive=True)
            if path is not None:
                plans["go to goal"] = path
            else:
                refusals["go to goal"] = (
                    "You cannot go to the goal, as there is no path leading to it."
                )

    targets = [t for t in seen if "wall" not in t.name and "goal" not in t.name]
    _numbered("go to", targets, paths, plans, refusals, then=[])
    plans[CHECK] = []
    return plans, refusals


def _numbered(verb, things, paths: _Paths, plans, refusals, *, then: list[int]) -> None:
    """``<verb> <name> <n>`` for each thing a path faces, numbered per name among those."""
    counts: dict[str, int] = {}
    for thing in things:
        path = paths.to(thing.cell, arrive=False)
        first = f"{verb} {thing.name} 1"
        number = 1 if first not in plans else counts[thing.name] + 1
        action = f"{verb} {thing.name} {number}"
        if path is not None:
            counts[thing.name] = number
            plans[action] = path + then
        else:
            refusals[action] = (
                f"You cannot {verb} {thing.name} {number}, as there is no path leading to it."
            )


def _door_actions(carrying, seen, paths: _Paths, plans, refusals) -> None:
    counts: dict[str, int] = {}
    for thing in seen:
        name = thing.name
        if "door" not in name:
            continue
        counts[name] = counts.get(name, 0) + 1
        numbered = f"{name} {counts[name]}"
        if "open door" in name:
            path = paths.to(thing.cell, arrive=True)
            if path is not None:
                plans[f"go through {numbered}"] = path
            else:
                refusals[f"go through {numbered}"] = (
                    f"You cannot go through {numbered}, as there is no path leading to it."
                )
            continue
        toggle_through = f"toggle and go through {numbered}"
        if "locked door" in name:
            if carrying is None or carrying.type != "key":
                refusals[toggle_through] = (
                    f"You cannot {toggle_through}, as you are not carrying a key."
                )
                continue
            if carrying.color != name.split(" ")[0]:
                refusals[toggle_through] = (
                    f"You cannot {toggle_through}, as the color of the key you are carrying"
                    " does not match the color of door."
                )
                continue
        path = paths.to(thing.cell, arrive=False)
        if path is not None:
            plans[toggle_through] = path + [TOGGLE, FORWARD]
        else:
            refusals[toggle_through] = (
                f"You cannot toggle and go through {name} {counts}, as there is no path leading"
                " to it."
            )
        if path == []:
            plans["toggle"] = [TOGGLE]
        if "closed door" in name:
            refusals[f"go through {numbered}"] = (
                f"You cannot go through {numbered}, as it is closed. You should toggle it first."
            )
