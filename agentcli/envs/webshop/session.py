"""WebShop's environment (catalog, goals, search, tagger, once per process) and its sessions:
a browser over the store's pages that steps as WebShop's text environment does.

An action is parsed with WebShop's pattern ``(.+)\\[(.+)\\]`` and its argument lowercased.
``search[...]`` works on every page; ``click[...]`` only on what the page lists (never the
search button itself); anything else leaves the page as it was, with reward 0. Buying ends
the episode with WebShop's reward; success is a reward of exactly 1.

The goals are the synthetic ones AgentGym's server serves (it never asks for WebShop's human
goals), or with ``WEBSHOP_GOALS=human`` those of ``items_human_ins.json``. An item page
lists the Attributes sub-page with ``WEBSHOP_SHOW_ATTRS=1``, as WebShop's ``show_attrs``
(AgentGym's server leaves it off).
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

from agentcli.envs.base import PromptStyle, Transition
from agentcli.envs.webshop import expert, pages, webpage
from agentcli.envs.webshop.actions import SEARCH_TEMPLATE, parse_action
from agentcli.envs.webshop.browser import Browser
from agentcli.envs.webshop.catalog import (
    HUMAN_FILE,
    Product,
    read_catalog,
    read_files,
    read_human_instructions,
)
from agentcli.envs.webshop.generate import DEFAULT_PRODUCTS, records
from agentcli.envs.webshop.goals import Goal, human_goals, synthetic_goals
from agentcli.envs.webshop.reward import NounTagger, noun_tagger, reward
from agentcli.envs.webshop.search import ProductSearch
from agentcli.errors import SessionStateError, TaskNotFoundError, UsageError

DATA_ENV_VAR = "WEBSHOP_DATA"
PRODUCTS_ENV_VAR = "WEBSHOP_PRODUCTS"
GOALS_ENV_VAR = "WEBSHOP_GOALS"
SHOW_ATTRS_ENV_VAR = "WEBSHOP_SHOW_ATTRS"
# WebShop's baselines test on goals 0-499 (baseline_models/env.py; 500-1499 are its eval set)
TEST_GOALS = 500


class WebShopEnvironment:
    def __init__(
        self,
        products: list[Product],
        tagger: NounTagger,
        goals: list[Goal] | None = None,
        *,
        show_attrs: bool = False,
    ) -> None:
        self.products = products
        self.by_asin = {product.asin: product for product in products}
        self.goals: list[Goal] = synthetic_goals(products) if goals is None else goals
        self.tagger = tagger
        self.show_attrs = show_attrs
        self.search = ProductSearch(products).search

    def splits(self) -> dict[str, list[int]]:
        held_out = min(TEST_GOALS, len(self.goals) // 5)
        return {"train": list(range(held_out, len(self.goals))), "test": list(range(held_out))}

    def goal(self, index: int) -> Goal:
        if not 0 <= index < len(self.goals):
            raise TaskNotFoundError(
                f"webshop has {len(self.goals)} goals (0–{len(self.goals) - 1}); no goal {index}"
            )
        return self.goals[index]

    def open_session(self, style: PromptStyle = "agentgym") -> WebShopSession:
        # the pages are WebShop's text under either style
        return WebShopSession(self)

    def privileged_state(self, index: int) -> str:
        return expert.privileged_state(self.goal(index))


class WebShopSession:
    def __init__(self, environment: WebShopEnvironment) -> None:
        self._environment = environment
        self.browser: Browser | None = None
        self.session_id = ""  # WebShop's: the goal index, as AgentGym's client resets
        self._rng = random.Random(0)  # each reset seeds its own

    def reset(self, index: int) -> Transition:
        self.browser = Browser(self._environment.goal(index))
        self.session_id = str(index)
        # <r> searches draw from it: the same draws whenever the goal's actions are replayed
        self._rng = random.Random(index)
        return self._transition()

    def step(self, action: str) -> Transition:
        browser = self.browser
        name, argument = parse_action(action)
        argument = argument.lower() if argument is not None else None
        if name == "search" and argument:
            self._search(argument, 1)
        elif name == "click" and argument in browser.page.clickables and argument != "search":
            return self._click(argument)
        return self._transition()

    def _search(self, keywords: str, page_number: int) -> None:
        browser = self.browser
        browser.kind, browser.keywords, browser.page_number = "results", keywords, page_number
        browser.results = self._environment.search(keywords, self._rng)
        browser.product, browser.options = None, {}
        browser.page = pages.results_page(browser.goal.text, browser.results, page_number)

    def _show_item(self) -> None:
        browser = self.browser
        browser.kind = "item"
        browser.page = pages.item_page(
            browser.goal.text, browser.product, self._environment.show_attrs
        )

    def _click(self, target: str) -> Transition:
        browser = self.browser
        sub_pages = {name.lower(): name for name in pages.SUB_PAGES}
        if target == pages.BUY.lower():
            score = reward(browser.product, browser.options, browser.goal, self._environment.tagger)
            browser.kind, browser.score = "done", score
            browser.page = pages.done_page(browser.product.asin, browser.options, score)
            return self._transition(score, done=True)
        if target == pages.BACK.lower():
            self.browser = Browser(browser.goal)
        elif target == pages.NEXT.lower() and browser.kind == "results":
            self._search(browser.keywords, browser.page_number + 1)
        elif target == pages.PREV.lower() and browser.kind == "results":
            self._search(browser.keywords, browser.page_number - 1)
        elif target == pages.PREV.lower() and browser.kind == "sub":
            self._show_item()
        elif target == pages.PREV.lower() and browser.kind == "item":
            self._search(browser.keywords, browser.page_number)
        elif target in sub_pages:
            browser.kind, browser.sub_page = "sub", sub_pages[target]
            browser.page = pages.sub_page(browser.goal.text, browser.product, browser.sub_page)
        elif browser.kind == "results":  # a product link
            browser.product = self._environment.by_asin[target.upper()]
            self._show_item()
        else:  # an option value: the last option that lists it, as WebShop's page maps it
            owner = [name for name, values in browser.product.options.items() if target in values]
            browser.options[owner[-1]] = target
            self._show_item()
        return self._transition()

    def _transition(self, score: float = 0.0, done: bool = False) -> Transition:
        page = self.browser.page
        candidates = [SEARCH_TEMPLATE] if page.has_search_bar else []
        candidates += [f"click[{name}]" for name in page.clickables if name != "search"]
        return Transition(
            observation=page.observation,
            reward=score,
            score=score,
            done=done,
            success=done and score == 1.0,
            available_actions=candidates,
        )

    def available_actions(self) -> dict[str, Any]:
        """What WebShop's ``get_available_actions`` reads off the page."""
        page = self.browser.page
        return {"has_search_bar": page.has_search_bar, "clickables": list(page.clickables)}

    def instruction_text(self) -> str:
        """The instruction as WebShop reads it off the page; refused on the thank-you page,
        which shows none (WebShop's text environment fails there)."""
        text = webpage.instruction_text(self.browser)
        if text is None:
            raise SessionStateError(
                f"session on goal {self.session_id} is on the thank-you page, which shows no"
                " instruction; POST /reset to start another episode"
            )
        return text

    def state(self) -> dict[str, str]:
        """WebShop's ``state``: the page's URL and HTML, and the instruction as it was read
        at the reset (off the search page)."""
        browser = self.browser
        return {
            "url": webpage.url(browser, self.session_id),
            "html": webpage.html(browser, self.session_id, self._environment.show_attrs),
            "instruction_text": f"Instruction: {browser.goal.text}",
        }

    def expert_action(self) -> str | None:
        return expert.next_action(self.browser) if self.browser else None

    def explain(self, action: str) -> str:
        return expert.explain(self.browser, action)

    def close(self) -> None:
        self.browser = None


def _setting(name: str, allowed: dict[str, Any], meaning: str) -> Any:
    value = os.environ.get(name, "")
    if value not in allowed:
        choices = " or ".join(repr(choice) for choice in allowed if choice)
        raise UsageError(f"{name}={value!r}: give {choices} ({meaning}), or leave it unset")
    return allowed[value]


def load() -> WebShopEnvironment:
    """WebShop's files under ``WEBSHOP_DATA``, else a generated catalog of ``WEBSHOP_PRODUCTS``
    (default 1,000) products; the synthetic goals, or with ``WEBSHOP_GOALS=human`` the human
    ones; the Attributes sub-page with ``WEBSHOP_SHOW_ATTRS=1``."""
    human = _setting(GOALS_ENV_VAR, {"": False, "synthetic": False, "human": True},
                     f"human: the goals of WebShop's {HUMAN_FILE}")  # fmt: skip
    show_attrs = _setting(SHOW_ATTRS_ENV_VAR, {"": False, "0": False, "1": True},
                          "1: item pages list their Attributes page")  # fmt: skip
    data_dir = os.environ.get(DATA_ENV_VAR)
    directory = Path(data_dir).expanduser() if data_dir else None
    if directory:
        products = read_files(directory)
    elif human:
        raise UsageError(
            f"{GOALS_ENV_VAR}=human builds goals from WebShop's {HUMAN_FILE}: set {DATA_ENV_VAR}"
            " to the folder that holds it (the generated catalog has no human instructions)"
        )
    else:
        count = os.environ.get(PRODUCTS_ENV_VAR, str(DEFAULT_PRODUCTS))
        if not count.isdigit() or int(count) < 1:
            raise UsageError(f"{PRODUCTS_ENV_VAR}={count!r}: give a whole number of products ≥ 1")
        products = read_catalog(*records(int(count)))
    goals = (
        human_goals(products, read_human_instructions(directory)) if directory and human else None
    )
    return WebShopEnvironment(products, noun_tagger(), goals, show_attrs=show_attrs)
