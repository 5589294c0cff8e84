"""What an ALFWorld agent has seen: the facts its observations have shown, and no others.

The room's opening text lists every receptacle and no object. A receptacle's contents are shown
when the agent arrives at it, opens it or examines it while it is open; after that only the
agent moves things, so it knows them until the episode ends. ``known_world`` cuts a game's
facts down to that knowledge, so the expert (``expert.next_action``) decides as the agent could:
it searches where it has not looked, and acts on what it has seen. The placement rules (what
fits where) and which receptacles open are the world's rules, known to any agent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from agentcli.envs.alfworld.expert import World

_LOOKING = ("go to ", "open ", "examine ")  # the actions that show a receptacle's contents


def seen_after(action: str, facts: Iterable[Any]) -> str | None:
    """The receptacle whose contents ``action`` showed, given the ``facts`` it led to (read
    only after a looking action: most steps are not one)."""
    for verb in _LOOKING:
        if action.startswith(verb):
            receptacle = action[len(verb) :].strip()
            world = World.from_facts(facts)
            shown = (
                receptacle in world.location
                and world.location[receptacle] == world.here
                and not world.closed(receptacle)
            )
            return receptacle if shown else None
    return None


def known_world(world: World, seen: set[str]) -> World:
    """``world`` as an agent that has looked into ``seen`` knows it."""
    inside = {thing: where for thing, where in world.inside.items() if where in seen}
    known = set(inside) | ({world.held} if world.held else set())
    return replace(
        world,
        inside=inside,
        kind={
            name: kind
            for name, kind in world.kind.items()
            if name in world.location or name in known
        },
        states={thing: states for thing, states in world.states.items() if thing in known},
        unseen=set(world.location) - seen,
    )
