"""BabyAI as text: what the agent sees and can do (our rendering of minigrid's egocentric
view), and the whole layout for a teacher (``describe_layout``).

minigrid shows the agent a 7x7 window: the agent stands at the middle of its bottom row, looking
up the window, and walls and closed doors hide what is behind them. We list each visible object
with where it is from the agent (steps ahead, steps to the left or right), name it
``<color> <type> <n>`` (doors also carry their state, so names read like AgentGym's:
``red locked door 1``; ``n`` counts objects of the same name, nearest first), say how far the
agent can walk ahead, left and right, and what it carries.

Each available action comes with its plan: the primitive minigrid actions that perform it. Plans
only cross cells the agent sees now, so they never fail half-way.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import Any

# minigrid's primitive actions (minigrid.core.actions.Actions) by value, so that this module
# imports without minigrid. WAIT is minigrid's "done": a step that changes nothing but still
# lets the mission verifier look (facing the target of "go to" counts only after a step).
LEFT, RIGHT, FORWARD, PICKUP, DROP, TOGGLE, WAIT = range(7)

# minigrid's agent_dir 0..3 as (dx, dy): east, south, west, north; y grows southwards.
DIRECTION_VECTORS = ((1, 0), (0, 1), (-1, 0), (0, -1))
DIRECTION_NAMES = ("east", "south", "west", "north")

CARRIABLE = ("key", "ball", "box")

Cell = tuple[int, int]
Pose = tuple[Cell, int]


@dataclass(frozen=True)
class View:
    """The agent's situation: the scene as text, and the actions it can take from here."""

    scene: str
    plans: dict[str, tuple[int, ...]]  # available action -> primitive actions, in display order
    refusals: dict[str, str]  # action that names something visible but can't be done -> why
    names: dict[Cell, str]  # absolute cell -> name of the visible object there
    pose: Pose

    def actions_line(self) -> str:
        return "Available actions: " + json.dumps(list(self.plans))


def object_name(obj: Any) -> str:
    """``red ball``, ``blue locked door``: what we call a minigrid object, without its number."""
    if obj.type == "door":
        state = "locked" if obj.is_locked else "open" if obj.is_open else "closed"
        return f"{obj.color} {state} door"
    return f"{obj.color} {obj.type}"


def facing_cell(pose: Pose) -> Cell:
    (x, y), direction = pose
    dx, dy = DIRECTION_VECTORS[direction]
    return x + dx, y + dy


def read_view(env: Any) -> View:
    """Describe what the agent of a minigrid env sees now and list what it can do."""
    grid, visible = env.gen_obs_grid()
    size = env.agent_view_size
    pose: Pose = ((int(env.agent_pos[0]), int(env.agent_pos[1])), int(env.agent_dir))
    (x, y), direction = pose
    fx, fy = DIRECTION_VECTORS[direction]
    rx, ry = -fy, fx

    # (steps ahead, steps to the right) -> object or None, for every visible cell but the agent's
    seen: dict[tuple[int, int], Any] = {}
    for i in range(size):
        for j in range(size):
            if visible[i, j] and (i, j) != (size // 2, size - 1):
                seen[(size - 1 - j, i - size // 2)] = grid.get(i, j)

    def absolute(ahead: int, right: int) -> Cell:
        return x + ahead * fx + right * rx, y + ahead * fy + right * ry

    objects = sorted(
        (offset for offset, obj in seen.items() if obj is not None and obj.type != "wall"),
        key=lambda offset: (offset[0] + abs(offset[1]), offset[0], offset[1]),
    )
    counts: dict[str, int] = {}
    named: list[tuple[str, Any, tuple[int, int]]] = []
    for offset in objects:
        base = object_name(seen[offset])
        counts[base] = counts.get(base, 0) + 1
        named.append((f"{base} {counts[base]}", seen[offset], offset))

    free = {absolute(*o) for o, obj in seen.items() if obj is None or obj.can_overlap()}
    free.add((x, y))
    routes = _Routes(pose, free)
    plans, refusals = _actions(env.carrying, seen.get((1, 0)), named, absolute, routes)
    scene = _scene(named, seen, size, env.carrying)
    names = {absolute(*offset): name for name, _, offset in named}
    return View(scene=scene, plans=plans, refusals=refusals, names=names, pose=pose)


def plan_to_face(env: Any, cell: Cell) -> tuple[int, ...] | None:
    """A plan to face ``cell`` over the whole grid, seen or not: for oracles, not for the agent."""
    grid = env.grid
    free = {
        (x, y)
        for x in range(grid.width)
        for y in range(grid.height)
        if grid.get(x, y) is None or grid.get(x, y).can_overlap()
    }
    pose = ((int(env.agent_pos[0]), int(env.agent_pos[1])), int(env.agent_dir))
    return _Routes(pose, free).to_face(cell)


class _Routes:
    """Shortest plans (turns and steps count alike) from the agent's pose over the free cells."""

    def __init__(self, start: Pose, free: set[Cell]):
        self._parent: dict[Pose, tuple[Pose, int] | None] = {start: None}
        self._first_facing: dict[Cell, Pose] = {}
        self._first_standing: dict[Cell, Pose] = {}
        queue = deque([start])
        while queue:
            pose = queue.popleft()
            self._first_facing.setdefault(facing_cell(pose), pose)
            self._first_standing.setdefault(pose[0], pose)
            cell, direction = pose
            moves = (
                (FORWARD, (facing_cell(pose), direction)),
                (LEFT, (cell, (direction - 1) % 4)),
                (RIGHT, (cell, (direction + 1) % 4)),
            )
            for action, nxt in moves:
                if nxt not in self._parent and nxt[0] in free:
                    self._parent[nxt] = (pose, action)
                    queue.append(nxt)

    def _plan(self, goal: Pose | None) -> tuple[int, ...] | None:
        if goal is None:
            return None
        actions = []
        link = self._parent[goal]
        while link is not None:
            goal, action = link
            actions.append(action)
            link = self._parent[goal]
        return tuple(reversed(actions))

    def to_face(self, cell: Cell) -> tuple[int, ...] | None:
        return self._plan(self._first_facing.get(cell))

    def to_stand_on(self, cell: Cell) -> tuple[int, ...] | None:
        return self._plan(self._first_standing.get(cell))


def _actions(carrying, front, named, absolute, routes: _Routes):
    plans: dict[str, tuple[int, ...]] = {"turn left": (LEFT,), "turn right": (RIGHT,)}
    refusals: dict[str, str] = {}
    front_name = next((name for name, _, offset in named if offset == (1, 0)), "wall")

    if front is None or front.can_overlap():
        plans["move forward"] = (FORWARD,)
    else:
        refusals["move forward"] = f"You cannot move forward: the {front_name} is in the way."

    has_key_for = {carrying.color} if carrying is not None and carrying.type == "key" else set()
    if front is not None and front.type == "box":
        plans["toggle"] = (TOGGLE,)
    elif front is not None and front.type == "door":
        if front.is_locked and front.color not in has_key_for:
            refusals["toggle"] = (
                f"The {front_name} is locked: you need to carry a {front.color} key."
            )
        else:
            plans["toggle"] = (TOGGLE,)
    else:
        refusals["toggle"] = "There is no door or box right in front of you to toggle."

    if carrying is None:
        refusals["drop"] = "You are not carrying anything."
    elif front is None:
        plans["drop"] = (DROP,)
    else:
        refusals["drop"] = f"You cannot drop here: the {front_name} is in front of you."

    for name, obj, offset in named:
        approach = routes.to_face(absolute(*offset))
        no_way = f"You cannot see a way to the {name}."
        if approach is None:
            refusals[f"go to {name}"] = no_way
        else:
            plans[f"go to {name}"] = approach or (WAIT,)
        if obj.type in CARRIABLE:
            if carrying is not None:
                refusals[f"pick up {name}"] = (
                    f"You already carry the {object_name(carrying)}: drop it first."
                )
            elif approach is None:
                refusals[f"pick up {name}"] = no_way
            else:
                plans[f"pick up {name}"] = approach + (PICKUP,)
        if obj.type == "door":
            _door_actions(
                name,
                obj,
                approach,
                routes.to_stand_on(absolute(*offset)),
                has_key_for,
                plans,
                refusals,
            )
    return plans, refusals


def _door_actions(name, door, approach, walk_in, has_key_for, plans, refusals) -> None:
    through, toggle_through = f"go through {name}", f"toggle and go through {name}"
    if door.is_open:
        refusals[toggle_through] = f"The {name} is already open: go through it."
        if walk_in is not None:
            plans[through] = walk_in
        else:
            refusals[through] = f"You cannot see a way through the {name}."
        return
    refusals[through] = f"The {name} is closed: toggle it first."
    if door.is_locked and door.color not in has_key_for:
        refusals[toggle_through] = f"The {name} is locked: you need to carry a {door.color} key."
    elif approach is None:
        refusals[toggle_through] = f"You cannot see a way to the {name}."
    else:
        plans[toggle_through] = approach + (TOGGLE, FORWARD)


def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def relative_position(pose: Pose, cell: Cell, whose: str = "my") -> str:
    """Where ``cell`` is from the agent: "2 steps ahead and 1 step to my left" (its own
    words), or with ``whose="your"`` as the env tells it."""
    (x, y), direction = pose
    fx, fy = DIRECTION_VECTORS[direction]
    dx, dy = cell[0] - x, cell[1] - y
    return _where(dx * fx + dy * fy, dx * -fy + dy * fx, whose=whose)


def _where(ahead: int, right: int, whose: str = "your") -> str:
    side = f"{_steps(abs(right))} to {whose} {'right' if right > 0 else 'left'}" if right else ""
    if ahead == 1 and not right:
        return f"right in front of {'me' if whose == 'my' else 'you'}"
    if not ahead:
        return side
    along = f"{_steps(ahead)} ahead" if ahead > 0 else f"{_steps(-ahead)} behind"
    return along + (f" and {side}" if side else "")


def _clearance(label: str, offsets, seen, names_by_offset) -> str:
    """How far the agent can walk in one direction, and what stops it."""
    walkable = 0
    for offset in offsets:
        if offset not in seen:
            break
        obj = seen[offset]
        if obj is not None:
            what = "a wall" if obj.type == "wall" else f"the {names_by_offset[offset]}"
            if walkable == 0:
                return f"{label}: {what}, right next to you."
            return f"{label}: {_steps(walkable)} free, then {what}."
        walkable += 1
    return f"{label}: {_steps(walkable)} free, as far as you can see."


def _scene(named, seen, size: int, carrying) -> str:
    names_by_offset = {offset: name for name, _, offset in named}
    if named:
        lines = ["You see:"] + [f"- {name}: {_where(*offset)}" for name, _, offset in named]
    else:
        lines = ["You see no objects."]
    half = size // 2
    lines.append(_clearance("Ahead", [(a, 0) for a in range(1, size)], seen, names_by_offset))
    lines.append(_clearance("Left", [(0, -s) for s in range(1, half + 1)], seen, names_by_offset))
    lines.append(_clearance("Right", [(0, s) for s in range(1, half + 1)], seen, names_by_offset))
    if carrying is None:
        lines.append("You are carrying nothing.")
    else:
        lines.append(f"You are carrying a {object_name(carrying)}.")
    return "\n".join(lines)


def out_of_sight(env: Any, view: View) -> str:
    """Every object of the grid the agent does not see now, nearest first, with where it is
    from the agent: what makes a one-room level fully observed. Unnumbered: only what is in
    view can be named in an action."""
    (x, y), _ = view.pose
    hidden = sorted(
        (abs(cx - x) + abs(cy - y), object_name(obj), (cx, cy))
        for (cx, cy), obj in objects_by_cell(env).items()
        if (cx, cy) not in view.names
    )
    if not hidden:
        return "Out of sight: nothing."
    lines = [f"- {name}: {relative_position(view.pose, cell, 'your')}" for _, name, cell in hidden]
    return "\n".join(["Out of sight:", *lines])


def objects_by_cell(env: Any) -> dict[tuple[int, int], Any]:
    """Every object but walls, by position, in reading order (rows from the north)."""
    grid = env.grid
    return {
        (x, y): grid.get(x, y)
        for y in range(grid.height)
        for x in range(grid.width)
        if grid.get(x, y) is not None and grid.get(x, y).type != "wall"
    }


def describe_layout(env: Any, title: str) -> str:
    """The whole grid as text: mission, its target objects, every object and door, a map."""
    grid = env.grid
    symbols = {"wall": "#", "key": "K", "ball": "O", "box": "B", "goal": "G", "lava": "~"}
    door_symbols = {"open": "_", "closed": "D", "locked": "L"}
    rows, objects = [], []
    (ax, ay), direction = env.agent_pos, env.agent_dir
    for y in range(grid.height):
        row = ""
        for x in range(grid.width):
            cell = grid.get(x, y)
            if (x, y) == (ax, ay):
                row += ">v<^"[direction]
            elif cell is None:
                row += "."
            elif cell.type == "door":
                row += door_symbols[object_name(cell).split()[1]]
            else:
                row += symbols.get(cell.type, "?")
            if cell is not None and cell.type != "wall":
                inside = (
                    f", containing a {object_name(cell.contains)}"
                    if getattr(cell, "contains", None)
                    else ""
                )
                objects.append(f"- {object_name(cell)} at ({x}, {y}){inside}")
        rows.append(row)
    carrying = f"a {object_name(env.carrying)}" if env.carrying is not None else "nothing"
    lines = [
        f"Level: {title}",
        f"Mission: {env.mission}",
        "Mission targets:",
        *_targets(env, env.instrs),
        f"Grid: {grid.width} x {grid.height} cells; (x, y) with x growing east and y south.",
        f"Agent: at ({ax}, {ay}), facing {DIRECTION_NAMES[direction]}, carrying {carrying}.",
        "Objects and doors:",
        *objects,
        "Map (# wall, . free, K key, O ball, B box, D closed door, L locked door, _ open door,"
        " >v<^ the agent facing east/south/west/north):",
        *rows,
    ]
    return "\n".join(lines)


def mission_objects(env: Any) -> list[Any]:
    """The objects the mission's descriptions match (its targets, in every clause)."""
    return [
        obj
        for instruction in _clauses(env.instrs)
        for description in _descriptions(instruction)
        for obj in description.obj_set
    ]


def _clauses(instruction: Any) -> list[Any]:
    if hasattr(instruction, "instr_a"):  # "then", "after you", "and"
        return _clauses(instruction.instr_a) + _clauses(instruction.instr_b)
    return [instruction]


def _descriptions(instruction: Any) -> list[Any]:
    return [
        getattr(instruction, name)
        for name in ("desc", "desc_move", "desc_fixed")
        if hasattr(instruction, name)
    ]


def _targets(env: Any, instruction: Any) -> list[str]:
    """One line per clause of the mission: the objects that satisfy its description."""
    return [_clause_targets(env, clause) for clause in _clauses(instruction)]


def _clause_targets(env: Any, instruction: Any) -> str:
    descriptions = _descriptions(instruction)
    found = [
        f"{object_name(obj)} at ({x}, {y})"
        for description in descriptions
        for obj, (x, y) in zip(description.obj_set, description.obj_poss, strict=False)
    ]
    return f"- {instruction.surface(env)}: " + ("; ".join(found) or "no matching object")
