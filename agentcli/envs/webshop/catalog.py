"""WebShop's product catalog, read from records in WebShop's own file formats.

The records are those of ``items_shuffle*.json`` (a list of scraped products) and
``items_ins_v2*.json`` (``{asin: {attributes, instruction, instruction_attributes}}``),
either WebShop's real files (``WEBSHOP_DATA``) or ``generate``'s. One reader serves both and
normalises them the way WebShop's ``load_products`` does: asins that are 'nan' or longer than
10 characters are skipped, duplicates keep the first; option names and values are lowercased,
values stripped and "/" written " | "; a price text is one price ("$12.99") or a range
("$10.99$20.99"), missing means $100.0; reviews are not loaded (WebShop leaves them out too,
so every product's rating is "N.A."). Human goals come from a third file,
``items_human_ins.json`` (``{asin: [{instruction, instruction_attributes,
instruction_options}]}``).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from agentcli.errors import UsageError

# WebShop draws a ranged product's price uniformly at load, from the global RNG (AgentGym's
# server seeds it with the time); we draw from our own, seeded, so prices repeat.
PRICE_SEED = 233
# The file pairs WebShop's loader reads, AgentGym's 1,000-product pair first.
FILE_PAIRS = (
    ("items_shuffle_1000.json", "items_ins_v2_1000.json"),
    ("items_shuffle.json", "items_ins_v2.json"),
)
HUMAN_FILE = "items_human_ins.json"  # the instructions people wrote (WebShop's human goals)


@dataclass(frozen=True)
class Product:
    asin: str
    title: str
    description: str
    bullets: tuple[str, ...]
    price_tag: str  # as the pages show it: "$12.99", "$10.99 to $20.99"
    price: float  # what buying it costs (a ranged price drawn once)
    options: dict[str, tuple[str, ...]]  # option name -> values, in the file's order
    attributes: tuple[str, ...]
    instruction: str | None  # the synthetic goal's text, before options and price
    instruction_attributes: tuple[str, ...]
    category: str
    query: str
    product_category: str  # the breadcrumb, joined with " › "
    rating: str = "N.A."
    image: str = ""  # the main image's address (only the page's HTML shows it)
    option_images: dict[str, str | None] = field(default_factory=dict)  # option value -> image


def _pricing(text: str | None) -> tuple[list[float], str]:
    if not text:
        return [100.0], "$100.0"
    prices = [float(Decimal(re.sub(r"[^\d.]", "", part))) for part in text.split("$")[1:]]
    if len(prices) == 1:
        return prices, f"${prices[0]}"
    return prices[:2], f"${prices[0]} to ${prices[1]}"


def _option_value(content: dict[str, Any]) -> str:
    return content["value"].strip().replace("/", " | ").lower()


def _options(customization: dict[str, Any] | None) -> dict[str, tuple[str, ...]]:
    options: dict[str, tuple[str, ...]] = {}
    for name, contents in (customization or {}).items():
        if contents is None:
            continue
        options[name.lower()] = tuple(_option_value(content) for content in contents)
    return options


def _option_images(customization: dict[str, Any] | None) -> dict[str, str | None]:
    return {
        _option_value(content): content.get("image")
        for contents in (customization or {}).values()
        for content in contents or ()
    }


def read_catalog(items: list[dict[str, Any]], annotations: dict[str, Any]) -> list[Product]:
    """Products from WebShop's two records, in file order."""
    rng = random.Random(PRICE_SEED)
    products: list[Product] = []
    seen: set[str] = set()
    for item in items:
        asin = item["asin"]
        if asin == "nan" or len(asin) > 10 or asin in seen:
            continue
        seen.add(asin)
        pricing, price_tag = _pricing(item.get("pricing"))
        price = pricing[0] if len(pricing) == 1 else rng.uniform(*pricing)
        annotation = annotations.get(asin, {})
        bullets = item["small_description"]
        products.append(
            Product(
                asin=asin,
                title=item["name"],
                description=item["full_description"],
                bullets=tuple(bullets if isinstance(bullets, list) else [bullets]),
                price_tag=price_tag,
                price=price,
                options=_options(item.get("customization_options")),
                # WebShop's placeholder only where the record has no attribute list at all
                attributes=tuple(annotation.get("attributes", ["DUMMY_ATTR"])),
                instruction=annotation.get("instruction"),
                instruction_attributes=tuple(annotation.get("instruction_attributes") or ()),
                category=item["category"],
                query=item["query"].lower().strip(),
                product_category=item["product_category"],
                image=(item.get("images") or [""])[0],
                option_images=_option_images(item.get("customization_options")),
            )
        )
    return products


def read_human_instructions(data_dir: Path) -> dict[str, Any]:
    """``items_human_ins.json`` under ``data_dir``: ``{asin: [{instruction,
    instruction_attributes, instruction_options}]}``."""
    path = data_dir / HUMAN_FILE
    if not path.is_file():
        raise UsageError(
            f"WEBSHOP_DATA={data_dir} holds no {HUMAN_FILE}, which human goals are built from;"
            " add WebShop's file there, or unset WEBSHOP_GOALS for the synthetic goals"
        )
    return json.loads(path.read_text())


def read_files(data_dir: Path) -> list[Product]:
    """The catalog in WebShop's real files under ``data_dir``."""
    for items_name, annotations_name in FILE_PAIRS:
        if (data_dir / items_name).is_file() and (data_dir / annotations_name).is_file():
            items = json.loads((data_dir / items_name).read_text())
            annotations = json.loads((data_dir / annotations_name).read_text())
            return read_catalog(items, annotations)
    wanted = " or ".join(" + ".join(pair) for pair in FILE_PAIRS)
    raise UsageError(
        f"WEBSHOP_DATA={data_dir} holds no WebShop product files ({wanted}); point it at "
        "WebShop's data folder, or unset it to use the generated catalog"
    )
