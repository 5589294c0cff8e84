"""Acting within the actions an env lists: a reply's action that the env does not list becomes
the listed action nearest to it in characters (``admissible``), or the model scores every listed
action as its reply and takes the likeliest (``ranked``) or the one greedy decoding writes when
it may write only those (``constrained``).

A small student spells an ALFWorld action a few characters off (``take creditcard 2 from
coffeeta``: its reply cut short) or names a receptacle that is not in the room; the env answers
"Nothing happens" and the episode burns its rounds. Choosing the nearest admissible action is
what AgentGym's and LEAP's ALFWorld agents are measured without, so it is a setting a run names
(``policy.actions``), never a default; every action ``admissible`` replaces is recorded. On
WebShop a small student garbles the asin it clicks (``click[b0pzder]``); there the listed
actions are read off the page (``EnvSpec.page_actions``) and a search keeps its own words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from rapidfuzz.distance import Levenshtein

ActionMode = Literal["free", "admissible", "ranked", "constrained"]
CHOSEN_BY_MODEL: tuple[ActionMode, ...] = ("ranked", "constrained")  # the model scores the list


_PLACEHOLDER = re.compile(r"<[^<>]+>")  # the part of a listed action the agent writes


def nearest_admissible(action: str, offered: Sequence[str]) -> str:
    """``action`` if the env lists it, else the listed action at the smallest character edit
    distance from it (the first listed of those that tie). A listed action with a placeholder
    (WebShop's ``search[<keywords>]``) admits every action that fills it, and is never what an
    action becomes; with nothing else listed, ``action`` stays as it is."""
    if action in offered or any(_fills(action, template) for template in offered):
        return action
    whole = [candidate for candidate in offered if not _is_template(candidate)]
    if not whole:
        return action
    distances = [Levenshtein.distance(action, candidate) for candidate in whole]
    return whole[distances.index(min(distances))]


def _is_template(listed: str) -> bool:
    """Whether a listed action has a part the agent writes (``search[<keywords>]``)."""
    return _PLACEHOLDER.search(listed) is not None


def _fills(action: str, template: str) -> bool:
    """Whether ``action`` is ``template`` with its placeholder written (non-empty)."""
    match = _PLACEHOLDER.search(template)
    if match is None:
        return False
    before, after = template[: match.start()], template[match.end() :]
    return (
        len(action) > len(before) + len(after)
        and action.startswith(before)
        and action.endswith(after)
    )
