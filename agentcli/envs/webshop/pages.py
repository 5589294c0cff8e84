"""WebShop's pages as its text mode shows them: the page's visible texts joined by " [SEP] ",
and its clickables (buttons and product links by their lowercased text, then option values).

Each function lists, in document order, the texts WebShop's HTML template for that page puts
on screen, as BeautifulSoup finds them: each text stripped, a whitespace-only text dropped
when it holds a line break (else kept, empty), an empty one absent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from agentcli.envs.webshop.catalog import Product

SEP = " [SEP] "
BUY = "Buy Now"
NEXT = "Next >"
PREV = "< Prev"
BACK = "Back to Search"
# WebShop's item sub-pages; an item page lists Attributes only when its server shows them
# (``show_attrs``; AgentGym's does not).
SUB_PAGES = ("Description", "Features", "Reviews", "Attributes")
ATTRIBUTES = "Attributes"
PER_PAGE = 10


@dataclass(frozen=True)
class Page:
    texts: tuple[str, ...]
    clickables: tuple[str, ...]
    has_search_bar: bool = False

    @property
    def observation(self) -> str:
        return SEP.join(self.texts)


def _visible(*texts: str) -> list[str]:
    shown = []
    for text in texts:
        if not text or (not text.strip() and "\n" in text):
            continue
        shown.append(text.strip())
    return shown


def _header(instruction: str) -> list[str]:
    return ["Instruction:", *_visible(instruction), BACK]


def search_page(instruction: str) -> Page:
    texts = ["WebShop", "Instruction:", *_visible(instruction), "Search"]
    return Page(tuple(texts), ("search",), has_search_bar=True)


def on_page(products: list[Product], page: int) -> list[Product]:
    """The results page ``page`` (from 1) lists."""
    return products[(page - 1) * PER_PAGE : page * PER_PAGE]


def results_page(instruction: str, products: list[Product], page: int) -> Page:
    """Page ``page`` (from 1) of the search results ``products``."""
    shown = on_page(products, page)
    buttons = [BACK, *([PREV] if page > 1 else []), NEXT]
    texts = [*_header(instruction), f"Page {page} (Total results: {len(products)})", *buttons[1:]]
    for product in shown:
        texts += _visible(product.asin, product.title, product.price_tag)
    clickables = [b.lower() for b in buttons] + [p.asin.lower() for p in shown]
    return Page(tuple(texts), tuple(dict.fromkeys(clickables)))


def item_page(instruction: str, product: Product, show_attrs: bool = False) -> Page:
    texts = [*_header(instruction), PREV]
    for name, values in product.options.items():
        texts += _visible(name, *values)
    texts += _visible(product.title, f"Price: {product.price_tag}", f"Rating: {product.rating}")
    sub_pages = [name for name in SUB_PAGES if show_attrs or name != ATTRIBUTES]
    texts += [*sub_pages, BUY]
    buttons = [BACK, PREV, *sub_pages, BUY]
    values = [value for values in product.options.values() for value in values]
    return Page(tuple(texts), tuple(dict.fromkeys([b.lower() for b in buttons] + values)))


def sub_page(instruction: str, product: Product, name: str) -> Page:
    """The Description, Features, Reviews or Attributes page of ``product`` (reviews are
    not loaded; attributes are followed by the product's category, query and breadcrumb)."""
    body = {
        "Description": _visible(product.description),
        "Features": _visible(*(" " + bullet for bullet in product.bullets)),
        "Reviews": [],
        "Attributes": _visible(
            *(" " + attribute for attribute in product.attributes),
            product.category,
            product.query,
            product.product_category,
        ),
    }[name]
    return Page(tuple([*_header(instruction), PREV, *body]), (BACK.lower(), PREV.lower()))


def tojson(value: object) -> str:
    """Flask's ``tojson``: sorted keys, ASCII, HTML-significant characters escaped."""
    text = json.dumps(value, sort_keys=True)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("'", "\\u0027")):
        text = text.replace(char, escaped)
    return text


def done_page(asin: str, options: dict[str, str], reward: float) -> Page:
    """The thank-you page; its hidden details are text too, and the simulator leaves most of
    them unset ("None", or empty)."""
    texts = [
        "Thank you for shopping with us!", "Your code:", "None",
        "(Paste it in your MTurk interface.)", "Purchased", "asin", *_visible(asin),
        "options", tojson(options), "attrs", "None", "category", "None", "query", "None",
        "product category", "None", "Target", "asin", "options", "attrs", "price upper",
        "instuction text", "category", "product category", "query", "Goal", "None", "Reward",
        "Your score (min 0.0, max 1.0)", str(reward), "Reward Details", "None",
    ]  # fmt: skip
    return Page(tuple(texts), ())
