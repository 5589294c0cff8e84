"""ALFWorld problems generated in memory from the data the ``alfworld`` wheel ships.

Real ALFWorld problems are AI2-THOR scenes replayed from ALFRED's trajectories, which cannot be
rebuilt here. This module writes problems of the same form from what the wheel holds: each
floor plan's object types (``gen/layouts/FloorPlan<n>-objects.json``) and receptacles with their
poses (``-openable.json``), what fits where and which objects can be cleaned, heated, cooled or
toggled (``gen/constants.py``), and the goal PDDL and task sentences (``gen/goal_library.py``).

Objects are sampled as ALFRED's trajectory generation samples them: 1-4 instances of the target
type (2-4 for ``pick_two_obj_and_place``), 1-3 of every other type that can be picked up in the
scene, each placed in a random receptacle that can hold it; the receptacles the task uses as
tools (sink basin, microwave, fridge, ...) start empty and no target starts where the goal wants
it, so the goal is never true at the start. Everything is drawn from ``random.Random`` seeded by
a string's SHA-256, so a seed gives the same problem in every process and hash seed.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import random
from dataclasses import dataclass
from functools import cache, cached_property
from importlib.resources import files
from typing import Any

from agentcli.errors import TaskNotFoundError

TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
# The state change a task asks for: the object class it needs (gen/constants.py's
# VAL_ACTION_OBJECTS key) and the receptacle type that does it.
TOOLS = {
    "pick_clean_then_place_in_recep": ("Cleanable", "SinkBasin"),
    "pick_heat_then_place_in_recep": ("Heatable", "Microwave"),
    "pick_cool_then_place_in_recep": ("Coolable", "Fridge"),
}
# ALFRED's trajectory generation: receptacles a task may not use as its goal, which also start
# empty for that task.
EMPTY_AT_START = {
    "pick_clean_then_place_in_recep": {"SinkBasin"},
    "pick_heat_then_place_in_recep": {"Microwave"},
    "pick_cool_then_place_in_recep": {"Fridge"},
    "pick_two_obj_and_place": {"CoffeeMachine", "ToiletPaperHanger", "HandTowelHolder"},
}
LAMPS = ("DeskLamp", "FloorLamp")
# Where a lamp stands. The wheel's layouts do not say which furniture a lamp is on (a floor
# lamp stands on the floor, which the PDDL domain cannot express: a lamp is used from the
# receptacle holding it), so a lamp goes on one of these, in this order of preference.
LAMP_STANDS = ("SideTable", "Desk", "Dresser", "Shelf", "CoffeeTable", "DiningTable", "TVStand")
OPENABLE = {"Fridge", "Cabinet", "Microwave", "Drawer", "Safe"}
TARGET_COUNTS = {"pick_two_obj_and_place": (2, 4)}  # ALFRED: PICKUP_REPEAT_MAX = 4
DEFAULT_TARGET_COUNT = (1, 4)
OTHER_COUNT = (1, 3)  # ALFRED: MAX_NUM_OF_OBJ_INSTANCES = 3
GRID = 0.25  # ALFRED's agent step: locations are poses in grid units


class GenerationError(TaskNotFoundError):
    """A signature that no problem fits (e.g. the floor plan lacks the goal's receptacle)."""


@dataclass(frozen=True)
class Signature:
    """What an ALFWorld game name says: ``<task>-<object>-<movable>-<receptacle>-<floor plan>``.

    ``receptacle`` is the lamp for ``look_at_obj_in_light``, as in ALFWorld's names.
    """

    task_type: str
    object: str
    receptacle: str
    floor_plan: int

    @classmethod
    def from_name(cls, name: str) -> Signature:
        task_type, obj, _movable, receptacle, floor_plan = name.split("/", 1)[0].split("-")
        return cls(task_type, obj, receptacle, int(floor_plan))

    @property
    def folder(self) -> str:
        return f"{self.task_type}-{self.object}-None-{self.receptacle}-{self.floor_plan}"


@dataclass(frozen=True)
class Problem:
    signature: Signature
    task: str  # the goal sentence, e.g. "put a clean soapbar in cabinet"
    pddl: str  # the problem, in the form of ALFWorld's initial_state.pddl


@dataclass(frozen=True)
class Receptacle:
    id: str  # ALFRED's object id, e.g. "Cabinet|+00.68|+00.50|-02.20"
    type: str
    location: tuple[int, int, int, int]


@dataclass(frozen=True)
class Scene:
    floor_plan: int
    object_types: frozenset[str]
    receptacles: tuple[Receptacle, ...]

    @cached_property
    def receptacle_types(self) -> frozenset[str]:
        return frozenset(receptacle.type for receptacle in self.receptacles)

    @cached_property
    def pickup_types(self) -> tuple[str, ...]:
        """Types that can be picked up here: those some receptacle can hold (as ALFRED)."""
        placeable = set().union(*constants().VAL_RECEPTACLE_OBJECTS.values())
        return tuple(sorted(self.object_types & placeable))


def import_alfworld(module: str) -> Any:
    """``importlib.import_module(module)`` for a module of the alfworld package, leaving the
    environment as it was: alfworld's first import sets ALFWORLD_DATA (to ~/.cache/alfworld)
    when it is unset, and every env server started after it would take that folder for the
    user's data and refuse to start without ALFWorld's download."""
    unset = "ALFWORLD_DATA" not in os.environ
    try:
        return importlib.import_module(module)
    finally:
        if unset:
            os.environ.pop("ALFWORLD_DATA", None)


@cache
def constants() -> Any:
    return import_alfworld("alfworld.gen.constants")


@cache
def _goals() -> dict[str, Any]:
    return import_alfworld("alfworld.gen.goal_library").gdict


def floor_plans() -> list[int]:
    return sorted(room for rooms in constants().SCENE_TYPE.values() for room in rooms)


def room_type(floor_plan: int) -> str:
    return next(name for name, rooms in constants().SCENE_TYPE.items() if floor_plan in rooms)


def holds(receptacle_type: str, object_type: str) -> bool:
    return object_type in constants().VAL_RECEPTACLE_OBJECTS.get(receptacle_type, ())


@cache
def scene(floor_plan: int) -> Scene:
    """A floor plan's object types and static receptacles. The wheel's receptacle list lacks
    some that the object list names (stove burners, coffee machines, toasters, most garbage
    cans, towel holders): each of those gets one instance at a location of its own."""
    layouts = files(import_alfworld("alfworld")) / "gen" / "layouts"
    try:
        object_types = json.loads((layouts / f"FloorPlan{floor_plan}-objects.json").read_text())
        poses = json.loads((layouts / f"FloorPlan{floor_plan}-openable.json").read_text())
    except FileNotFoundError:
        raise GenerationError(
            f"ALFWorld has no floor plan {floor_plan}: its floor plans are 1-30, 201-230, "
            "301-330 and 401-430"
        ) from None
    static = set(constants().VAL_RECEPTACLE_OBJECTS) - set(constants().MOVABLE_RECEPTACLES)
    receptacles = []
    for object_id, (x, z, rotation, horizon) in sorted(poses.items()):
        kind = object_id.split("|")[-1] if object_id.endswith("Basin") else object_id.split("|")[0]
        if kind in static:
            location = (round(x / GRID), round(z / GRID), int(rotation) // 90, int(horizon))
            receptacles.append(Receptacle(object_id, kind, location))
    present = {receptacle.type for receptacle in receptacles}
    used = {receptacle.location for receptacle in receptacles}
    rng = random.Random(_seed_number(f"receptacles of FloorPlan{floor_plan}"))
    for kind in sorted(set(object_types) & static - present):
        receptacles.append(Receptacle(_new_id(kind, rng, set()), kind, _new_location(rng, used)))
    return Scene(floor_plan, frozenset(object_types), tuple(receptacles))


def generate(signature: Signature, seed: str) -> Problem:
    """The problem ``seed`` gives for ``signature``; raises GenerationError if none fits."""
    rng = random.Random(_seed_number(seed))
    room = scene(signature.floor_plan)
    task_type, target = signature.task_type, signature.object
    _check(signature, room)
    look = task_type == "look_at_obj_in_light"
    emptied = EMPTY_AT_START.get(task_type, set())
    goal_types = set() if look else {signature.receptacle}

    ids: set[str] = set()
    placed: list[tuple[str, str, Receptacle]] = []  # (object id, type, receptacle)
    for kind in room.pickup_types:
        if kind == target:
            low, high = TARGET_COUNTS.get(task_type, DEFAULT_TARGET_COUNT)
            forbidden = emptied | goal_types
        else:
            low, high = OTHER_COUNT
            forbidden = emptied
        spots = [r for r in room.receptacles if holds(r.type, kind) and r.type not in forbidden]
        count = rng.randint(low, high)
        if not spots:
            if kind == target:
                raise GenerationError(
                    f"alfworld {signature.folder}: no receptacle of FloorPlan"
                    f"{signature.floor_plan} can hold a {target} away from the goal"
                )
            continue
        for _ in range(count):
            placed.append((_new_id(kind, rng, ids), kind, rng.choice(spots)))
    lamps = []
    if look:
        stand = next(kind for kind in LAMP_STANDS if kind in room.receptacle_types)
        spots = [r for r in room.receptacles if r.type == stand]
        lamps.append(
            (_new_id(signature.receptacle, rng, ids), signature.receptacle, rng.choice(spots))
        )
        placed += lamps

    used = {receptacle.location for receptacle in room.receptacles}
    agent_location = _new_location(rng, used)
    template = rng.choice(_goals()[task_type]["templates"])
    names = {"obj": target.lower(), "recep": signature.receptacle.lower()}
    task = template.format(**names, toggle=names["recep"])
    goal = _goals()[task_type]["pddl"].replace("#", "-")
    goal = goal.format(obj=target, recep=signature.receptacle, toggle=signature.receptacle)
    pddl = _problem_text(
        f"{signature.folder}-{_seed_number(seed) % 10**6}",
        room,
        placed,
        {object_id for object_id, _, _ in lamps},
        agent_location,
        goal,
    )
    return Problem(signature, task, pddl)


@cache
def valid_signatures(task_type: str, floor_plan: int) -> tuple[Signature, ...]:
    """Every (object, receptacle) a task can use in a floor plan, as ALFRED's sampler allows:
    the room type suits the task, the object can undergo the task's state change, the goal
    receptacle can hold it and is not one of the task's tools."""
    if room_type(floor_plan) not in constants().GOALS_VALID[task_type]:
        return ()
    room = scene(floor_plan)
    found = []
    for kind in room.pickup_types:
        if task_type == "look_at_obj_in_light":
            goals = [lamp for lamp in LAMPS if lamp in room.object_types]
        else:
            goals = sorted(room.receptacle_types - EMPTY_AT_START.get(task_type, set()))
        for goal in goals:
            signature = Signature(task_type, kind, goal, floor_plan)
            if _fits(signature, room):
                found.append(signature)
    return tuple(found)


def sample_signature(seed: str, floor_plans: list[int]) -> Signature:
    """A task type uniformly, then a floor plan among ``floor_plans`` where it can be played,
    then an (object, receptacle) pair uniformly among those the floor plan allows."""
    rng = random.Random(_seed_number(seed))
    task_type = rng.choice(TASK_TYPES)
    rooms = [room for room in floor_plans if valid_signatures(task_type, room)]
    return rng.choice(valid_signatures(task_type, rng.choice(rooms)))


def _check(signature: Signature, room: Scene) -> None:
    if signature.task_type not in TASK_TYPES:
        raise GenerationError(
            f"alfworld has no task type {signature.task_type!r}: use one of {', '.join(TASK_TYPES)}"
        )
    if not _fits(signature, room):
        raise GenerationError(
            f"alfworld {signature.folder} cannot be generated: FloorPlan{signature.floor_plan} "
            f"lacks a {signature.object}, a {signature.receptacle} that holds it, or the tool "
            "the task needs"
        )


def _fits(signature: Signature, room: Scene) -> bool:
    task_type, target, goal = signature.task_type, signature.object, signature.receptacle
    if target not in room.pickup_types:
        return False
    if task_type == "look_at_obj_in_light":
        if goal not in LAMPS or not room.receptacle_types & set(LAMP_STANDS):
            return False
    elif goal not in room.receptacle_types or not holds(goal, target):
        return False
    if task_type in TOOLS:
        needed, tool = TOOLS[task_type]
        if target not in constants().VAL_ACTION_OBJECTS[needed]:
            return False
        if tool not in room.receptacle_types:
            return False
    forbidden = EMPTY_AT_START.get(task_type, set()) | (
        set() if task_type == "look_at_obj_in_light" else {goal}
    )
    return any(holds(r.type, target) and r.type not in forbidden for r in room.receptacles)


def _seed_number(seed: str) -> int:
    return int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")


def _new_id(kind: str, rng: random.Random, taken: set[str]) -> str:
    """An ALFRED-style object id (``Apple|+00.12|+00.95|-01.40``) not yet in ``taken``."""
    while True:
        x, y, z = (rng.uniform(-3, 3) for _ in range(3))
        object_id = f"{kind}|{x:+06.2f}|{abs(y):+06.2f}|{z:+06.2f}"
        if object_id not in taken:
            taken.add(object_id)
            return object_id


def _new_location(rng: random.Random, taken: set[tuple[int, int, int, int]]) -> tuple:
    while True:
        location = (rng.randint(-20, 20), rng.randint(-20, 20), rng.randint(0, 3), 30)
        if location not in taken:
            taken.add(location)
            return location


def mangle(name: str) -> str:
    """ALFWorld's PDDL spelling of an id: ``Cabinet|-00.73`` -> ``Cabinet_bar__minus_00_dot_73``."""
    for plain, spelled in (("|", "_bar_"), ("-", "_minus_"), ("+", "_plus_"), (".", "_dot_")):
        name = name.replace(plain, spelled)
    return name.replace(",", "_comma_")


def _location(location: tuple[int, ...]) -> str:
    return mangle("loc|" + "|".join(str(part) for part in location))


def _problem_text(
    name: str,
    room: Scene,
    placed: list[tuple[str, str, Receptacle]],
    lamps: set[str],
    agent_location: tuple[int, int, int, int],
    goal: str,
) -> str:
    wheel = constants()
    object_types = sorted({kind for _, kind, _ in placed})
    receptacle_types = sorted(room.receptacle_types)
    locations = sorted({r.location for r in room.receptacles} | {agent_location})
    objects = sorted(placed, key=lambda entry: entry[0])
    receptacles = sorted(room.receptacles, key=lambda r: r.id)
    declared = [
        "agent1 - agent",
        *(f"{kind}Type - otype" for kind in object_types),
        *(f"{kind}Type - rtype" for kind in receptacle_types),
        *(f"{mangle(object_id)} - object" for object_id, _, _ in objects),
        *(f"{mangle(r.id)} - receptacle" for r in receptacles),
        *(f"{_location(location)} - location" for location in locations),
    ]
    facts = [f"(receptacleType {mangle(r.id)} {r.type}Type)" for r in receptacles]
    facts += [f"(objectType {mangle(object_id)} {kind}Type)" for object_id, kind, _ in objects]
    facts += [
        f"(canContain {receptacle}Type {kind}Type)"
        for receptacle in receptacle_types
        for kind in object_types
        if holds(receptacle, kind)
    ]
    for object_id, kind, _ in objects:
        spelled = mangle(object_id)
        if object_id in lamps:
            facts.append(f"(toggleable {spelled})")
            continue
        facts.append(f"(pickupable {spelled})")
        for predicate, group in (
            ("cleanable", "Cleanable"),
            ("heatable", "Heatable"),
            ("coolable", "Coolable"),
        ):
            if kind in wheel.VAL_ACTION_OBJECTS[group]:
                facts.append(f"({predicate} {spelled})")
    facts += [f"(openable {mangle(r.id)})" for r in receptacles if r.type in OPENABLE]
    facts.append(f"(atLocation agent1 {_location(agent_location)})")
    facts += [f"(inReceptacle {mangle(object_id)} {mangle(r.id)})" for object_id, _, r in objects]
    facts += [f"(receptacleAtLocation {mangle(r.id)} {_location(r.location)})" for r in receptacles]
    facts += [
        f"(objectAtLocation {mangle(object_id)} {_location(r.location)})"
        for object_id, _, r in objects
    ]
    indent = "\n        "
    return (
        f"(define (problem plan_{mangle(name)})\n(:domain alfred)\n(:objects{indent}"
        + indent.join(declared)
        + f"\n        )\n\n(:init{indent}"
        + indent.join(facts)
        + "\n        )\n"
        + goal
    )
