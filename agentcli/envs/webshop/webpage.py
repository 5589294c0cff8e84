"""A session's page as WebShop's text environment holds it: its HTML (WebShop's own template,
in ``templates/``, rendered as its simulated server renders it), its URL and the instruction
read off it; what ``GET /state`` and ``GET /instruction_text`` answer.

WebShop's session id is the goal index (AgentGym's client resets with ``session_id=idx``).
Its text environment's Flask app registers every page at ``/``, so a template's links carry
their values in the query string; the URLs of the pages themselves are its simulated
server's (``http://127.0.0.1:3000/item_page/<session>/<asin>/<keywords>/<page>/<options>``).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

from agentcli.envs.webshop import pages
from agentcli.envs.webshop.browser import Browser
from agentcli.envs.webshop.catalog import Product

BASE_URL = "http://127.0.0.1:3000"
TEMPLATES = Path(__file__).parent / "templates"
SUB_PAGE_TEMPLATES = {
    "Description": "description_page.html",
    "Features": "features_page.html",
    "Reviews": "review_page.html",
    "Attributes": "attributes_page.html",
}  # WebShop's ACTION_TO_TEMPLATE


@functools.cache
def _environment() -> Any:
    import jinja2

    # Flask's render_template_string: autoescaped, with url_for and Flask's tojson
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, keep_trailing_newline=True
    )
    environment.globals["url_for"] = _url_for
    environment.filters["tojson"] = pages.tojson
    return environment


def _url_for(endpoint: str, **values: Any) -> str:
    """Flask's ``url_for`` in WebShop's text environment: ``static`` is served from
    ``/static``, every page at ``/`` with its values as query parameters."""
    if endpoint == "static":
        return f"/static/{values['filename']}"
    query = [
        f"{quote_plus(name)}={quote_plus(str(item))}"
        for name, value in values.items()
        if value is not None
        for item in (value if isinstance(value, list | tuple) else [value])
    ]
    return "/?" + "&".join(query)


def _product_info(product: Product) -> dict[str, Any]:
    """The product record WebShop's templates read."""
    return {
        "asin": product.asin,
        "Title": product.title,
        "Description": product.description,
        "BulletPoints": list(product.bullets),
        "Price": product.price_tag,
        "Rating": product.rating,
        "Reviews": [],
        "Attributes": list(product.attributes),
        "options": {name: list(values) for name, values in product.options.items()},
        "option_to_image": product.option_images,
        "MainImage": product.image,
        "category": product.category,
        "query": product.query,
        "product_category": product.product_category,
    }


def html(browser: Browser, session_id: str, show_attrs: bool) -> str:
    """The page's HTML, as WebShop's template renders it for this state."""
    keywords = (browser.keywords or "").split(" ")
    shared = {"session_id": session_id, "instruction_text": browser.goal.text}
    if browser.kind == "search":
        return _render("search_page.html", **shared)
    if browser.kind == "results":
        shown = pages.on_page(browser.results, browser.page_number)
        return _render(
            "results_page.html",
            **shared,
            products=[_product_info(product) for product in shown],
            keywords=keywords,
            page=browser.page_number,
            total=len(browser.results),
        )
    product = browser.product
    item = {
        **shared,
        "product_info": _product_info(product),
        "keywords": keywords,
        "page": browser.page_number,
        "asin": product.asin,
        "options": dict(browser.options),
    }
    if browser.kind == "item":
        return _render("item_page.html", **item, show_attrs=show_attrs)
    if browser.kind == "sub":
        return _render(SUB_PAGE_TEMPLATES[browser.sub_page], **item)
    # the simulated server gives the thank-you page none of its purchase details
    unset = ("reward_info", "goal_attrs", "purchased_attrs", "goal", "mturk_code", "query",
             "category", "product_category")  # fmt: skip
    return _render(
        "done_page.html",
        session_id=session_id,
        reward=browser.score,
        asin=product.asin,
        options=dict(browser.options),
        **dict.fromkeys(unset),
    )


def _render(template: str, **values: Any) -> str:
    return _environment().get_template(template).render(**values)


def url(browser: Browser, session_id: str) -> str:
    """The page's URL in WebShop's simulated server."""
    if browser.kind == "search":
        return f"{BASE_URL}/{session_id}"
    keywords = (browser.keywords or "").replace(" ", "+")
    if browser.kind == "results":
        return f"{BASE_URL}/search_results/{session_id}/{keywords}/{browser.page_number}"
    asin, options = browser.product.asin, browser.options
    at = f"{session_id}/{asin}/{keywords}/{browser.page_number}"
    if browser.kind == "item":
        return f"{BASE_URL}/item_page/{at}/{json.dumps(options)}"
    if browser.kind == "sub":
        return f"{BASE_URL}/item_sub_page/{at}/{browser.sub_page}/{options}"
    return f"{BASE_URL}/done/{session_id}/{asin}/{options}"


def instruction_text(browser: Browser) -> str | None:
    """The text of the page's ``#instruction-text h4``, as WebShop's
    ``get_instruction_text`` reads it ("Instruction: " and the goal on the search page,
    "Instruction:" and the goal on the others); None on the thank-you page, which has none."""
    if browser.kind == "done":
        return None
    label = "Instruction: " if browser.kind == "search" else "Instruction:"
    return label + browser.goal.text
