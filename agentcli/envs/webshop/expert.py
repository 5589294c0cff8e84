"""WebShop's oracle: search for the goal, page to the goal product, pick the goal's options,
buy. It searches with the goal's instruction (what a shopper would type) and, when that lists
no goal product in its 50 results, with the product's title; from any student state it goes
on toward the same purchase. Privileged state is the goal
itself: the product, the attributes and options asked for, the price bound.
"""

from __future__ import annotations

import re

from agentcli.envs.webshop import pages
from agentcli.envs.webshop.browser import Browser
from agentcli.envs.webshop.goals import NO_PRICE_BOUND, Goal


def _query(text: str) -> str:
    """``text`` as search keywords: no brackets (they would end the action), one line."""
    return " ".join(re.sub(r"[\[\]]", " ", text).lower().split())


def _search(browser: Browser) -> str | None:
    """The instruction's words first; after them, the product's title; after that, nothing
    (the title not finding it is rare, and searching on would loop)."""
    instruction = _query(browser.goal.product.instruction or "")
    title = _query(browser.goal.product.title)
    if browser.keywords == title:
        return None
    return f"search[{title if browser.keywords == instruction or not instruction else instruction}]"


def next_action(browser: Browser) -> str | None:
    goal = browser.goal
    target = goal.product.asin
    if browser.kind == "done":
        return None
    if browser.kind == "search":
        return _search(browser)
    if browser.kind == "results":
        listed = [product.asin for product in browser.results]
        if target not in listed:
            return _search(browser)
        page = listed.index(target) // pages.PER_PAGE + 1
        if page == browser.page_number:
            return f"click[{target.lower()}]"
        return f"click[{(pages.NEXT if page > browser.page_number else pages.PREV).lower()}]"
    if browser.kind == "sub" or browser.product.asin != target:
        return f"click[{pages.PREV.lower()}]"
    for name, value in goal.options.items():
        owner = [n for n, values in browser.product.options.items() if value in values]
        if browser.options.get(name) != value and owner[-1:] == [name]:
            return f"click[{value}]"
    return f"click[{pages.BUY.lower()}]"


def explain(browser: Browser, action: str) -> str:
    """Why the oracle takes ``action`` here, from what the page and the request show."""
    goal = browser.goal
    argument = action[action.find("[") + 1 : action.rfind("]")] if "[" in action else ""
    if action.startswith("search"):
        if argument == _query(goal.product.title):
            return (
                "None of the results fits the request, so I search for the product by its "
                f"name: {argument}."
            )
        return f"I search the store for what the customer asked for: {argument}."
    if argument == pages.NEXT.lower():
        return "No product on this page fits the request; I look at the next page of results."
    if argument == pages.PREV.lower() and browser.kind == "results":
        return "The product that fits was on an earlier page of results; I go back to it."
    if argument == pages.PREV.lower() and browser.kind == "sub":
        return "I have read this page; I go back to the product to choose its options."
    if argument == pages.PREV.lower():
        return "This is not the product I need, so I go back to the results."
    if argument == pages.BUY.lower():
        return (
            f"This product fits the request, its options are set, and at "
            f"{goal.product.price_tag} it is within the budget, so I buy it."
        )
    if browser.kind == "results":
        return f"{argument.upper()} fits the request best, so I open it."
    owner = next((n for n, value in goal.options.items() if value == argument), "option")
    return f"The customer asked for {owner}: {argument}, so I select it."


def privileged_state(goal: Goal) -> str:
    product = goal.product
    options = ", ".join(f"{name}: {value}" for name, value in goal.options.items())
    bound = "none"
    if goal.price_upper != NO_PRICE_BOUND:
        bound = f"lower than {goal.price_upper:.2f} dollars"
    return "\n".join(
        [
            f"Goal product: {product.asin} ({product.title})",
            f"Attributes asked for: {', '.join(goal.attributes)}",
            f"Options to select: {options or 'none'}",
            f"Price bound: {bound}; the product costs {product.price_tag}",
        ]
    )
