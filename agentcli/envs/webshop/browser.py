"""Where a WebShop session is: the page shown and what led there.

Below the session that steps it and the expert and page renderer that read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentcli.envs.webshop import pages
from agentcli.envs.webshop.catalog import Product
from agentcli.envs.webshop.goals import Goal


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
    sub_page: str | None = None  # which one, on a sub-page
    score: float | None = None  # the purchase's reward, on the thank-you page

    def __post_init__(self) -> None:
        self.page = pages.search_page(self.goal.text)
