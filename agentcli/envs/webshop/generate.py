"""A generated WebShop catalog, in WebShop's own file formats, for machines without its data.

``records(n, seed)`` returns what ``items_shuffle*.json`` and ``items_ins_v2*.json`` would hold
for ``n`` products: five categories as WebShop's (beauty, electronics, fashion, food,
furniture), breadcrumbs, search queries, attributes, colour and size options, single and
ranged prices, and a synthetic instruction naming some of the product's attributes. Product
``i`` depends only on ``(seed, i)``, so a larger catalog extends a smaller one.

Option values avoid WebShop's colour-normalisation trap (a value such as "peppered", which it
reads as "red"), so that buying the goal product with the goal's options scores 1.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from typing import Any

DEFAULT_PRODUCTS = 1000
DEFAULT_SEED = 0


@dataclass(frozen=True)
class Kind:
    """One product type: its noun, where it sits, what it can have."""

    category: str
    noun: str
    breadcrumb: str
    attributes: tuple[str, ...]
    options: dict[str, tuple[str, ...]]
    prices: tuple[float, float]
    uses: tuple[str, ...]


COLORS = ("Black", "White", "Navy Blue", "Grey", "Red", "Green", "Beige", "Pink", "Brown")
APPAREL_SIZES = ("Small", "Medium", "Large", "X-Large", "XX-Large")
SHOE_SIZES = ("7", "8", "8.5", "9", "10", "11", "12")
PACKS = ("Pack of 1", "Pack of 2", "Pack of 4", "Pack of 6")
FLAVORS = ("Original", "Vanilla", "Chocolate", "Sea Salt", "Honey", "Mixed Berry")
SCENTS = ("Unscented", "Lavender", "Coconut", "Eucalyptus", "Citrus")

KINDS: tuple[Kind, ...] = (
    Kind("fashion", "t-shirt", "Clothing, Shoes & Jewelry › Men › Clothing › Shirts › T-Shirts",
         ("machine wash", "short sleeve", "cotton spandex", "slim fit", "crew neck",
          "moisture wicking"),
         {"Color": COLORS, "Size": APPAREL_SIZES}, (9.0, 35.0), ("gym", "daily wear")),
    Kind("fashion", "hoodie", "Clothing, Shoes & Jewelry › Women › Clothing › Fashion Hoodies",
         ("long sleeve", "fleece lined", "drawstring closure", "hand wash", "relaxed fit"),
         {"Color": COLORS, "Size": APPAREL_SIZES}, (19.0, 60.0), ("winter", "lounging")),
    Kind("fashion", "sneakers", "Clothing, Shoes & Jewelry › Men › Shoes › Fashion Sneakers",
         ("rubber sole", "lace up", "non slip", "arch support", "breathable mesh"),
         {"Color": COLORS, "Size": SHOE_SIZES}, (25.0, 120.0), ("walking", "running")),
    Kind("fashion", "leggings", "Clothing, Shoes & Jewelry › Women › Clothing › Leggings",
         ("high waist", "tummy control", "four way stretch", "squat proof", "machine wash"),
         {"Color": COLORS, "Size": APPAREL_SIZES}, (12.0, 40.0), ("yoga", "workout")),
    Kind("beauty", "shampoo", "Beauty & Personal Care › Hair Care › Shampoo & Conditioner",
         ("sulfate free", "paraben free", "natural ingredients", "dry hair", "color safe"),
         {"Size": ("8 Fl Oz", "16 Fl Oz", "32 Fl Oz"), "Scent": SCENTS}, (6.0, 30.0),
         ("daily use", "damaged hair")),
    Kind("beauty", "face moisturizer", "Beauty & Personal Care › Skin Care › Face › Moisturizers",
         ("cruelty free", "hyaluronic acid", "fragrance free", "sensitive skin", "oil free"),
         {"Size": ("1.7 Ounce", "3.4 Ounce")}, (10.0, 55.0), ("night", "daily use")),
    Kind("beauty", "lipstick", "Beauty & Personal Care › Makeup › Lips › Lipstick",
         ("long lasting", "matte finish", "vegan", "cruelty free", "highly pigmented"),
         {"Color": ("Red", "Pink", "Nude", "Plum", "Coral")}, (5.0, 25.0), ("parties", "work")),
    Kind("electronics", "bluetooth speaker", "Electronics › Portable Audio & Video › Speakers",
         ("waterproof", "long battery life", "wireless bluetooth", "stereo sound", "usb charging"),
         {"Color": ("Black", "Blue", "Red", "Grey")}, (18.0, 150.0), ("outdoor", "travel")),
    Kind("electronics", "phone case", "Cell Phones & Accessories › Cases, Holsters & Sleeves",
         ("shockproof", "slim design", "wireless charging compatible", "scratch resistant",
          "raised edges"),
         {"Color": ("Black", "Clear", "Blue", "Pink", "Green")}, (7.0, 30.0),
         ("iphone", "daily protection")),
    Kind("electronics", "hdmi cable", "Electronics › Accessories & Supplies › Cables › HDMI Cables",
         ("high speed", "gold plated", "4k resolution", "braided cord", "ethernet support"),
         {"Size": ("3 Feet", "6 Feet", "10 Feet", "15 Feet")}, (6.0, 25.0),
         ("home theater", "gaming")),
    Kind("food", "protein bar", "Grocery & Gourmet Food › Snacks & Sweets › Protein Bars",
         ("gluten free", "high protein", "low sugar", "non gmo", "keto friendly"),
         {"Flavor": FLAVORS, "Size": PACKS}, (12.0, 45.0), ("snacks", "after workouts")),
    Kind("food", "herbal tea", "Grocery & Gourmet Food › Beverages › Tea › Herbal",
         ("caffeine free", "usda organic", "non gmo", "individually wrapped", "kosher"),
         {"Flavor": ("Chamomile", "Rooibos", "Ginger", "Hibiscus"), "Size": PACKS},
         (5.0, 30.0), ("bedtime", "relaxing")),
    Kind("food", "mixed nuts", "Grocery & Gourmet Food › Snacks & Sweets › Nuts & Seeds",
         ("lightly salted", "resealable bag", "plant based", "gluten free", "high fiber"),
         {"Size": ("16 Ounce", "24 Ounce", "40 Ounce")}, (8.0, 35.0), ("snacks", "parties")),
    Kind("furniture", "office chair", "Home & Kitchen › Furniture › Home Office Furniture › Chairs",
         ("lumbar support", "adjustable height", "easy assembly", "mesh back", "swivel base"),
         {"Color": ("Black", "Grey", "White", "Blue")}, (60.0, 320.0), ("home office", "gaming")),
    Kind("furniture", "bookshelf", "Home & Kitchen › Furniture › Living Room Furniture › Bookcases",
         ("solid wood", "easy assembly", "space saving", "5 tier", "wall mounted"),
         {"Color": ("White", "Black", "Brown", "Walnut")}, (35.0, 220.0),
         ("living room", "small spaces")),
    Kind("furniture", "throw pillow cover",
         "Home & Kitchen › Bedding › Decorative Pillows, Inserts & Covers › Throw Pillow Covers",
         ("hidden zipper", "machine wash", "super soft", "double sided", "velvet fabric"),
         {"Color": COLORS, "Size": ("18 x 18 Inch", "20 x 20 Inch", "26 x 26 Inch")},
         (8.0, 30.0), ("sofa", "bedroom")),
)  # fmt: skip

BRANDS = (
    "Acorn", "Bluepeak", "Cedarline", "Dovetail", "Everfield", "Fernwood", "Glimmer", "Harbor",
    "Ironbark", "Juniper", "Kestrel", "Lumen", "Maple & Co", "Northstar", "Orchard", "Pinecrest",
    "Quillon", "Riverstone", "Saltmarsh", "Tidewater", "Umbra", "Verity", "Willowby", "Zephyr",
)  # fmt: skip
# Instructions naming one attribute, then two.
INSTRUCTIONS = (
    ("i'm looking for {a} {noun} for {use}", "i would like a {a} {noun}", "i need {a} {noun}"),
    (
        "i am looking for {a} {noun} that is {b}",
        "i need a {noun} that is {a} and {b}",
        "find me {a}, {b} {noun}",
        "i want to buy a {noun} which is {a}, and {b}",
    ),
)


def _asin(rng: random.Random) -> str:
    return "B0" + "".join(rng.choices(string.ascii_uppercase + string.digits, k=8))


def _price(rng: random.Random, low: float, high: float) -> float:
    return round(rng.uniform(low, high)) - 0.01 if high > 10 else round(rng.uniform(low, high), 2)


def _product(seed: int, index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    rng = random.Random(f"webshop:{seed}:{index}")
    kind = rng.choice(KINDS)
    asin = _asin(rng)
    brand = rng.choice(BRANDS)
    model = f"{rng.choice(string.ascii_uppercase)}{rng.randint(10, 999)}"
    attributes = rng.sample(kind.attributes, k=rng.randint(2, min(4, len(kind.attributes))))
    use = rng.choice(kind.uses)
    title = f"{brand} {model} {attributes[0].title()} {kind.noun.title()} with " + (
        f"{', '.join(attributes[1:])} for {use}"
    )
    wanted = attributes[: rng.randint(1, 2)]
    instruction = rng.choice(INSTRUCTIONS[len(wanted) - 1]).format(
        a=wanted[0], b=wanted[-1], noun=kind.noun, use=use
    )
    options = {}
    for name, values in kind.options.items():
        if rng.random() < 0.85:
            picked = rng.sample(values, k=rng.randint(1, min(3, len(values))))
            options[name] = [{"value": v, "image": None} for v in picked]
    low = _price(rng, *kind.prices)
    pricing = f"${low:.2f}"
    if rng.random() < 0.1:
        pricing += f"${low + round(rng.uniform(2, 20)):.2f}"
    bullets = [
        f"{attribute.capitalize()}: made for {use} and built to last." for attribute in attributes
    ]
    description = (
        f"The {brand} {model} {kind.noun} is {', '.join(attributes)}. "
        f"Designed for {use}, it ships from {brand}'s own warehouse."
    )
    item = {
        "asin": asin,
        "name": title,
        "full_description": description,
        "small_description": bullets,
        "pricing": pricing,
        "customization_options": options,
        "images": [f"https://images.example.com/{asin}.jpg"],
        "category": kind.category,
        "query": kind.noun + ("s" if not kind.noun.endswith("s") else ""),
        "product_category": kind.breadcrumb,
        "average_rating": None,
    }
    annotation = {
        "attributes": attributes,
        "instruction": instruction,
        "instruction_attributes": wanted,
    }
    return item, annotation


def records(
    products: int = DEFAULT_PRODUCTS, seed: int = DEFAULT_SEED
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``(items, annotations)``: the two files' contents for ``products`` products."""
    items, annotations = [], {}
    for index in range(products):
        item, annotation = _product(seed, index)
        items.append(item)
        annotations.setdefault(item["asin"], annotation)
    return items, annotations
