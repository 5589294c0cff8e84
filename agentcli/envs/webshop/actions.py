"""A WebShop action as the session reads it, and what kind of step it is.

``parse_action`` is WebShop's pattern ``(.+)\\[(.+)\\]``. ``action_kind`` sorts a recorded step
into what a shopper does: search, open a result, choose an option, buy, move between pages
(next/prev, back to search, a product's sub-pages), or an invalid action that the page does
not take (the session leaves the page as it was) or a reply with no action at all. It decides
from the records alone: the page the action was taken on (its text), the action and, where a
record has them, the page's candidate actions. Over AgentGym's webshop wire a step answers no
candidates, so the page's clickables are read back from its text, as ``pages`` writes it.
"""

from __future__ import annotations

import re

from agentcli.envs.webshop import pages

ACTION = re.compile(r"(.+)\[(.+)\]")

SEARCH = "search"
RESULT = "result"  # a product of the search results (its asin)
OPTION = "option"  # an option value on a product's page
BUY = "buy"
NAVIGATE = "navigate"  # next/prev, back to search, description/features/reviews/attributes
INVALID = "invalid"  # not taken by the page, or no action in the reply
KINDS = (SEARCH, RESULT, OPTION, BUY, NAVIGATE, INVALID)

SEARCH_TEMPLATE = "search[<keywords>]"  # a search, as the session lists it: the words are free
_TOTAL = re.compile(r"Page \d+ \(Total results: \d+\)")
_ASIN = re.compile(r"[0-9A-Z]{10}")  # WebShop's asins, as a results page shows them
_BUTTONS = {name.lower() for name in (pages.BACK, pages.NEXT, pages.PREV, *pages.SUB_PAGES)}


def parse_action(action: str) -> tuple[str, str | None]:
    match = ACTION.match(action)
    return (match.group(1), match.group(2)) if match else (action, None)


def read_page(observation: str) -> tuple[str, frozenset[str]]:
    """The page's kind (``search``, ``results``, ``item``, ``sub``, ``done``; ``unknown`` for
    a text no page shows) and what a click may name there, read off its text. On an item page
    the option names count as clickable too: its text does not tell a name from a value."""
    texts = observation.split(pages.SEP)
    if texts[0] == "WebShop":
        return "search", frozenset({"search"})
    if pages.BACK not in texts:
        return ("done" if texts[0].startswith("Thank you") else "unknown"), frozenset()
    after = texts[texts.index(pages.BACK) + 1 :]
    back = {pages.BACK.lower()}
    if after and _TOTAL.fullmatch(after[0]):
        buttons = {text.lower() for text in after[1:3] if text in (pages.PREV, pages.NEXT)}
        return "results", frozenset(back | buttons | set(_asins(after[1:])))
    if not after or after[0] != pages.PREV:
        return "unknown", frozenset()
    prices = [i for i, text in enumerate(after) if text.startswith("Price: ")]
    if after[-1] != pages.BUY or not prices:
        return "sub", frozenset(back | {pages.PREV.lower()})
    sub_pages = {text.lower() for text in after if text in pages.SUB_PAGES}
    choices = set(after[1 : prices[-1] - 1])  # option names and values, before the title
    return "item", frozenset(back | {pages.PREV.lower(), pages.BUY.lower()} | sub_pages | choices)


def first_result(observation: str) -> str | None:
    """The first product a results page lists (its asin, as a click names it); None on any
    other page, or a page of no results."""
    kind, _ = read_page(observation)
    if kind != "results":
        return None
    texts = observation.split(pages.SEP)
    return next(iter(_asins(texts[texts.index(pages.BACK) + 2 :])), None)


def page_actions(observation: str) -> list[str]:
    """The actions the page offers, as the session lists them (``search[<keywords>]`` where
    it has a search bar, then a click for each clickable, in sorted order), read off its text.
    On an item page the option names are offered too (see ``read_page``)."""
    kind, clickables = read_page(observation)
    search = [SEARCH_TEMPLATE] if kind == "search" else []
    return search + [f"click[{name}]" for name in sorted(clickables) if name != "search"]


def _asins(texts: list[str]) -> list[str]:
    return [text.lower() for text in texts if _ASIN.fullmatch(text)]


def action_kind(page: str, action: str, candidates: list[str] | None = None) -> str:
    """The kind of ``action`` taken on ``page`` (the page's text), one of ``KINDS``. A
    ``search[...]`` is taken on any page, as the session takes it; a ``click[...]`` is taken
    where the page lists it (``candidates`` when given, else ``read_page``)."""
    name, argument = parse_action(action)
    if name == "search" and argument:
        return SEARCH
    if name != "click" or not argument:
        return INVALID
    target = argument.lower()
    kind, clickables = read_page(page)
    taken = f"click[{target}]" in candidates if candidates is not None else target in clickables
    if not taken or target == "search":
        return INVALID
    if target == pages.BUY.lower():
        return BUY
    if target in _BUTTONS:
        return NAVIGATE
    return RESULT if kind == "results" else OPTION
