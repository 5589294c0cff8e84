"""Acting within the actions an env lists: a reply's action that the env does not list becomes
the listed action nearest to it in characters (``admissible``), or the model scores every listed
action as its reply and takes the likeliest (``ranked``) or the one greedy decoding writes when
it may write only those (``constrained``).

A small student spells an ALFWorld action a few characters off (``take creditcard 2 from
coffeeta``: its reply cut short) or names a receptacle that is not in the room; the env answers
"Nothing happens" and the episode burns its rounds. Choosing the nearest admissible action is
what AgentGym's and LEAP's ALFWorld agents are measured without, so it is a setting a run names
(``policy.actions``), never a default; every action ``admissible`` replaces is recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from rapidfuzz.distance import Levenshtein

ActionMode = Literal["free", "admissible", "ranked", "constrained"]
CHOSEN_BY_MODEL: tuple[ActionMode, ...] = ("ranked", "constrained")  # the model scores the list


def nearest_admissible(action: str, offered: Sequence[str]) -> str:
    """``action`` if the env lists it, else the listed action at the smallest character edit
    distance from it (the first listed of those that tie). ``offered`` is not empty."""
    if action in offered:
        return action
    distances = [Levenshtein.distance(action, candidate) for candidate in offered]
    return offered[distances.index(min(distances))]
