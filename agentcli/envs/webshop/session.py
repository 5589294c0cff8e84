"""WebShop's environment (catalog, goals, search, tagger, once per process) and its sessions:
a browser over the store's pages that steps as WebShop's text environment does.

An action is parsed with WebShop's pattern ``(.+)\\[(.+)\\]`` and its argument lowercased.
``search[...]`` works on every page; ``click[...]`` only on what the page lists (never the
search button itself); anything else leaves the page as it was, with reward 0. Buying ends
the episode with WebShop's reward; success is a reward of exactly 1.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from agentcli.envs.base import PromptStyle, Transition
from agentcli.envs.webshop import expert, pages
from agentcli.envs.webshop.catalog import Product, read_catalog, read_files
from agentcli.envs.webshop.generate import DEFAULT_PRODUCTS, records
from agentcli.envs.webshop.goals import Goal, synthetic_goals
from agentcli.envs.webshop.reward import NounTagger, noun_tagger, reward
from agentcli.envs.webshop.search import SearchIndex
from agentcli.errors import TaskNotFoundError, UsageError

DATA_ENV_VAR = "WEBSHOP_DATA"
PRODUCTS_ENV_VAR = "WEBSHOP_PRODUCTS"
TEST_GOALS = 500  # WebShop holds out its first 500 goals as the test set
ACTION = re.compile(r"(.+)\[(.+)\]")


def parse_action(action: str) -> tuple[str, str | None]:
    match = ACTION.match(action)
    return (match.group(1), match.group(2)) if match else (action, None)


class WebShopEnvironment:
    def __init__(self, products: list[Product], tagger: NounTagger) -> None:
        self.products = products
        self.by_asin = {product.asin: product for product in products}
        self.goals: list[Goal] = synthetic_goals(products)
        self.tagger = tagger
        self._index = SearchIndex(products)
        self.search = lru_cache(maxsize=4096)(self._index.search)

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


@dataclass
class Browser:
    """Where a session is: the page shown and what led there."""

    goal: Goal
    kind: str = "search"  # search, results, item, sub, done
    page: pages.Page = field(init=False)
    keywords: str | None = None
    results: list[Product] = field(default_factory=list)
    page_number: int = 1
    product: Product | None = None
    options: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.page = pages.search_page(self.goal.text)


class WebShopSession:
    def __init__(self, environment: WebShopEnvironment) -> None:
        self._environment = environment
        self.browser: Browser | None = None

    def reset(self, index: int) -> Transition:
        self.browser = Browser(self._environment.goal(index))
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
        browser.results = self._environment.search(keywords)
        browser.product, browser.options = None, {}
        browser.page = pages.results_page(browser.goal.text, browser.results, page_number)

    def _show_item(self) -> None:
        browser = self.browser
        browser.kind = "item"
        browser.page = pages.item_page(browser.goal.text, browser.product)

    def _click(self, target: str) -> Transition:
        browser = self.browser
        sub_pages = {name.lower(): name for name in pages.SUB_PAGES}
        if target == pages.BUY.lower():
            score = reward(browser.product, browser.options, browser.goal, self._environment.tagger)
            browser.kind = "done"
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
            browser.kind = "sub"
            browser.page = pages.sub_page(browser.goal.text, browser.product, sub_pages[target])
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
        candidates = ["search[<keywords>]"] if page.has_search_bar else []
        candidates += [f"click[{name}]" for name in page.clickables if name != "search"]
        return Transition(
            observation=page.observation,
            reward=score,
            score=score,
            done=done,
            success=done and score == 1.0,
            available_actions=candidates,
        )

    def expert_action(self) -> str | None:
        return expert.next_action(self.browser) if self.browser else None

    def explain(self, action: str) -> str:
        return expert.explain(self.browser, action)

    def close(self) -> None:
        self.browser = None


def load() -> WebShopEnvironment:
    """WebShop's files under ``WEBSHOP_DATA``, else a generated catalog of ``WEBSHOP_PRODUCTS``
    (default 1,000) products."""
    data_dir = os.environ.get(DATA_ENV_VAR)
    if data_dir:
        products = read_files(Path(data_dir).expanduser())
    else:
        count = os.environ.get(PRODUCTS_ENV_VAR, str(DEFAULT_PRODUCTS))
        if not count.isdigit() or int(count) < 1:
            raise UsageError(f"{PRODUCTS_ENV_VAR}={count!r}: give a whole number of products ≥ 1")
        products = read_catalog(*records(int(count)))
    return WebShopEnvironment(products, noun_tagger())
