"""The ALFWorld expert: the next action, decided from a ``World`` of facts alone.

TextWorld's planner replans the whole game on every step (minutes on a large kitchen). This
expert reads where things are from the facts and acts greedily: put down anything useless it
holds, fetch the cheapest target (fewest go/open actions), give it the state change the task
needs, and take it to the cheapest goal receptacle. Given every fact of the game it is
omniscient (it walks straight to a target no observation has shown); given only what the
agent has seen (``sightings.known_world``), it searches the receptacles it has not looked
into, in a fixed order, for what it does not know the place of. Because it keeps no memory
of its own, it picks up from any state an agent's detours leave (a wrong object in hand, a
target moved or closed in), and asking changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentcli.envs.alfworld import generation
from agentcli.envs.alfworld.generation import Signature

LAMP_STANDS = tuple(kind.lower() for kind in generation.LAMP_STANDS)  # searched for a lamp

# The state a task needs, the fact that records it and the receptacle type that gives it.
STATE_CHANGES = {
    "pick_clean_then_place_in_recep": ("clean", "isclean", "sinkbasin"),
    "pick_heat_then_place_in_recep": ("heat", "ishot", "microwave"),
    "pick_cool_then_place_in_recep": ("cool", "iscool", "fridge"),
}


@dataclass
class World:
    """What the facts say, keyed by the names the player sees (``cabinet 1``)."""

    here: str = ""
    held: str | None = None
    location: dict[str, str] = field(default_factory=dict)  # receptacle -> location
    inside: dict[str, str] = field(default_factory=dict)  # object -> receptacle
    kind: dict[str, str] = field(default_factory=dict)  # object or receptacle -> "cabinet"
    openable: set[str] = field(default_factory=set)
    opened: set[str] = field(default_factory=set)
    states: dict[str, set[str]] = field(default_factory=dict)  # object -> {"isclean", ...}
    fits: set[tuple[str, str]] = field(default_factory=set)  # (receptacle kind, object kind)
    # Receptacles whose contents the expert does not know: searched for what it cannot place.
    unseen: set[str] = field(default_factory=set)

    @classmethod
    def from_facts(cls, facts: Iterable[Any]) -> World:
        world = cls()
        for fact in facts:
            names = [argument.name.strip() for argument in fact.arguments]
            name = fact.name
            if name == "atlocation":
                world.here = names[1]
            elif name == "holds":
                world.held = names[1]
            elif name == "receptacleatlocation":
                world.location[names[0]] = names[1]
            elif name == "inreceptacle":
                world.inside[names[0]] = names[1]
            elif name in ("objecttype", "receptacletype"):
                world.kind[names[0]] = _kind(names[1])
            elif name == "openable":
                world.openable.add(names[0])
            elif name == "opened":
                world.opened.add(names[0])
            elif name == "cancontain":
                world.fits.add((_kind(names[0]), _kind(names[1])))
            elif name in ("isclean", "ishot", "iscool", "istoggled"):
                world.states.setdefault(names[0], set()).add(name)
        return world

    def closed(self, receptacle: str) -> bool:
        return receptacle in self.openable and receptacle not in self.opened

    def reach_cost(self, receptacle: str) -> int:
        """Actions before something can be taken from or put in ``receptacle``."""
        return int(self.location[receptacle] != self.here) + int(self.closed(receptacle))

    def of_kind(self, kind: str) -> list[str]:
        return sorted((name for name, k in self.kind.items() if k == kind), key=natural_key)

    def receptacles(self) -> list[str]:
        return sorted(self.location, key=natural_key)


def next_action(world: World, goal: Signature, admissible: Sequence[str]) -> str | None:
    """The expert's next command (one of ``admissible``), or None when it sees none."""
    for command in _wanted(world, goal):
        if command in admissible:
            return command
    return None


def _wanted(world: World, goal: Signature) -> list[str]:
    """Spellings of the one action the expert wants (ALFWorld's grammars differ on put: older
    data says ``put X in/on Y``)."""
    target, destination = goal.object.lower(), goal.receptacle.lower()
    held = world.held
    if goal.task_type == "look_at_obj_in_light":
        if held is None:
            return _fetch(world, world.of_kind(target)) or _search(world, target)
        if world.kind.get(held) != target:
            return _put_away(world, held)
        lamps = [lamp for lamp in world.of_kind(destination) if lamp in world.inside]
        if not lamps:
            return _search(world, destination, likely=LAMP_STANDS)
        lamp = min(lamps, key=lambda lamp: world.reach_cost(world.inside[lamp]))
        stand = world.inside[lamp]
        if world.location[stand] != world.here:
            return [f"go to {stand}"]
        return [f"use {lamp}"]

    change = STATE_CHANGES.get(goal.task_type)
    needed = 2 if goal.task_type == "pick_two_obj_and_place" else 1
    places = world.of_kind(destination)
    if not places:
        return []
    # The receptacle to fill: one already holding finished targets, else the cheapest.
    finished = {
        place: [
            thing
            for thing, where in world.inside.items()
            if where == place and _finished(world, thing, target, change)
        ]
        for place in places
    }
    place = min(places, key=lambda p: (-len(finished[p]), world.reach_cost(p), natural_key(p)))
    if held is None:
        candidates = [t for t in world.of_kind(target) if t not in finished[place]]
        # ALFRED never starts a target where the task puts it, nor in the tool that changes it
        unlikely = {destination, change[2]} if change else {destination}
        return _fetch(world, candidates) or _search(world, target, unlikely=unlikely)
    if world.kind.get(held) != target or len(finished[place]) >= needed:
        return _put_away(world, held)
    if change and change[1] not in world.states.get(held, set()):
        verb, _, tool_kind = change
        if not world.of_kind(tool_kind):
            return []
        tool = min(world.of_kind(tool_kind), key=lambda t: (world.reach_cost(t), natural_key(t)))
        if world.location[tool] != world.here:
            return [f"go to {tool}"]
        return [f"{verb} {held} with {tool}"]
    return _put(world, held, place)


def _finished(world: World, thing: str, target: str, change: tuple | None) -> bool:
    return world.kind.get(thing) == target and (
        change is None or change[1] in world.states.get(thing, set())
    )


def _fetch(world: World, candidates: list[str]) -> list[str]:
    reachable = [thing for thing in candidates if thing in world.inside]
    if not reachable:
        return []
    thing = min(reachable, key=lambda t: (world.reach_cost(world.inside[t]), natural_key(t)))
    where = world.inside[thing]
    if world.location[where] != world.here:
        return [f"go to {where}"]
    if world.closed(where):
        return [f"open {where}"]
    return [f"take {thing} from {where}"]


def _search(
    world: World, kind: str, *, likely: Iterable[str] = (), unlikely: Iterable[str] = ()
) -> list[str]:
    """Look into the next unseen receptacle that can hold a ``kind`` (or, given ``likely``, of
    those kinds), in a fixed order: the one the agent stands at, ``unlikely`` kinds last, those
    seen by going there before those that need opening, then by name."""
    likely, unlikely = set(likely), set(unlikely)
    if likely:  # a kind the rules place nowhere (a lamp): likely kinds, else anywhere
        spots = [r for r in world.unseen if world.kind.get(r) in likely] or list(world.unseen)
    else:
        spots = [r for r in world.unseen if (world.kind.get(r), kind) in world.fits]
    if not spots:
        return []
    spot = min(
        spots,
        key=lambda r: (
            world.location[r] != world.here,
            world.kind.get(r) in unlikely,
            r in world.openable,
            natural_key(r),
        ),
    )
    if world.location[spot] != world.here:
        return [f"go to {spot}"]
    return [f"open {spot}"] if world.closed(spot) else [f"examine {spot}"]


def _put(world: World, thing: str, place: str) -> list[str]:
    if world.location[place] != world.here:
        return [f"go to {place}"]
    if world.closed(place):
        return [f"open {place}"]
    return [f"move {thing} to {place}", f"put {thing} in/on {place}"]


def _put_away(world: World, thing: str) -> list[str]:
    """Set down an object the task does not need, in the nearest receptacle that takes it."""
    kind = world.kind.get(thing, "")
    spots = [r for r in world.receptacles() if (world.kind.get(r), kind) in world.fits]
    if not spots:
        return []
    return _put(world, thing, min(spots, key=lambda r: (world.reach_cost(r), natural_key(r))))


def _kind(type_name: str) -> str:
    """``CabinetType`` / ``cabinettype`` -> ``cabinet``."""
    name = type_name.strip().lower()
    return name[: -len("type")] if name.endswith("type") else name


def natural_key(name: str) -> tuple[str, int]:
    word, _, number = name.rpartition(" ")
    return (word, int(number)) if number.isdigit() else (name, 0)
