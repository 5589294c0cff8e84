"""WebShop's rule baseline: search the goal's words before its options and price, click the
first result, buy. Graded reward makes such a template worth ~0.6 mean score, so a learned
policy is measured beside it (docs/environments/webshop.md)."""

from __future__ import annotations

import re

from agentcli.envs.webshop import pages
from agentcli.envs.webshop.actions import first_result, read_page

_PRICE = re.compile(r",? and price lower than [\d.]+ dollars$")
# the last " with <name>: " starts the options (" with color: blue, and size: large"); an
# instruction may say "with" too ("sneakers with a rubber sole")
_BEFORE_OPTIONS = re.compile(r"(.*) with [^,:]+: ")


def goal_words(goal: str) -> str:
    """The goal's text before its options and price (goals.py writes them last)."""
    words = _PRICE.sub("", goal)
    options = _BEFORE_OPTIONS.match(words)
    return options.group(1) if options else words


def rule_action(observation: str) -> str:
    """The baseline's action on the page whose text is ``observation``: search on the search
    page, the first result on a results page, buy on a product's page; back to the search
    elsewhere (a sub-page, or a search that found nothing)."""
    kind, _ = read_page(observation)
    texts = observation.split(pages.SEP)
    if kind == "search":
        return f"search[{goal_words(texts[texts.index('Instruction:') + 1])}]"
    if kind == "results" and (first := first_result(observation)) is not None:
        return f"click[{first}]"
    if kind == "item":
        return f"click[{pages.BUY.lower()}]"
    return f"click[{pages.BACK.lower()}]"
