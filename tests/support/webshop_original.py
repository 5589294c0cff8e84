"""WebShop's own code, for tests that our webshop is WebShop: how its text environment reads a
page (``web_agent_site/envs/web_agent_text_env.py``) and how it loads products and builds
goals (``engine/engine.py``, ``engine/goal.py``), as AgentGym's server runs them (its copy in
agentenv-webshop/webshop/ at 3ef9235).

Copied as written but for what cannot run here or does not bear on the result: bs4's
current names (``find_all(string=True)`` for ``findAll(text=True)``), the paths are
arguments, printing and progress bars are gone, the reviews (never loaded) and spaCy (the
reward's, not the goals') are left out, and the prices are given (WebShop draws a ranged
price from its global RNG, which AgentGym's server seeds with the time).
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup
from bs4.element import Comment

PRICE_RANGE = [10.0 * i for i in range(1, 100)]


# --- web_agent_text_env.py: WebAgentTextEnv reading its page -------------------------------


def tag_visible(element):
    ignore = {"style", "script", "head", "title", "meta", "[document]"}
    return element.parent.name not in ignore and not isinstance(element, Comment)


def convert_html_to_text(html: str) -> str:
    """``convert_html_to_text(html, simple=True)``: the text observation."""
    texts = BeautifulSoup(html, "html.parser").find_all(string=True)
    visible_texts = filter(tag_visible, texts)
    return " [SEP] ".join(t.strip() for t in visible_texts if t != "\n")


def get_available_actions(html: str) -> dict[str, Any]:
    html_obj = BeautifulSoup(html, "html.parser")
    search_bar = html_obj.find(id="search_input")
    has_search_bar = True if search_bar is not None else False  # noqa: SIM210
    buttons = html_obj.find_all(class_="btn")
    product_links = html_obj.find_all(class_="product-link")
    buying_options = html_obj.select('input[type="radio"]')
    text_to_clickable = {f"{b.get_text()}".lower(): b for b in buttons + product_links}
    for opt in buying_options:
        opt_value = opt.get("value")
        text_to_clickable[f"{opt_value}"] = opt
    return dict(has_search_bar=has_search_bar, clickables=list(text_to_clickable.keys()))


def get_instruction_text(html: str) -> str:
    html_obj = BeautifulSoup(html, "html.parser")
    return html_obj.find(id="instruction-text").h4.text


# --- engine.py: load_products ------------------------------------------------------------


def load_products(data_dir: Path, human_goals: bool) -> list[dict[str, Any]]:
    products = json.loads((data_dir / "items_shuffle_1000.json").read_text())
    attributes = json.loads((data_dir / "items_ins_v2_1000.json").read_text())
    # AgentGym's copy opens the human file whichever goals it builds
    human_attributes = json.loads((data_dir / "items_human_ins.json").read_text())
    asins = set()
    all_products = []
    for i, p in enumerate(products):
        asin = p["asin"]
        if asin == "nan" or len(asin) > 10:
            continue
        if asin in asins:
            continue
        else:
            asins.add(asin)
        products[i]["Title"] = p["name"]
        pricing = p.get("pricing")
        if pricing is None or not pricing:
            pricing = [100.0]
        else:
            pricing = [
                float(Decimal(re.sub(r"[^\d.]", "", price))) for price in pricing.split("$")[1:]
            ]
        products[i]["pricing"] = pricing
        options = dict()
        customization_options = p["customization_options"]
        if customization_options:
            for option_name, option_contents in customization_options.items():
                if option_contents is None:
                    continue
                option_name = option_name.lower()
                option_values = []
                for option_content in option_contents:
                    option_value = option_content["value"].strip().replace("/", " | ").lower()
                    option_values.append(option_value)
                options[option_name] = option_values
        products[i]["options"] = options
        if asin in attributes and "attributes" in attributes[asin]:
            products[i]["Attributes"] = attributes[asin]["attributes"]
        else:
            products[i]["Attributes"] = ["DUMMY_ATTR"]
        if human_goals:
            if asin in human_attributes:
                products[i]["instructions"] = human_attributes[asin]
        else:
            products[i]["instruction_text"] = attributes[asin].get("instruction", None)
            products[i]["instruction_attributes"] = attributes[asin].get(
                "instruction_attributes", None
            )
        products[i]["query"] = p["query"].lower().strip()
        all_products.append(products[i])
    return all_products


# --- goal.py: get_human_goals, get_synthetic_goals; SimServer's shuffle ------------------


def get_human_goals(all_products, product_prices):
    goals = []
    cnt_atts = defaultdict(int)
    cnt = 0
    for item in all_products:
        asin = item["asin"]
        if "instructions" not in item:
            continue
        for product in item["instructions"]:
            attributes = product["instruction_attributes"]
            if len(attributes) == 0:
                cnt += 1
                continue
            for i in range(0, 4):
                if product_prices is not None:
                    price = product_prices[asin]
                    price_range = [p for p in PRICE_RANGE if p > price][:4]
                    if len(price_range) >= 2:
                        if i >= len(price_range):
                            continue
                        price_upper = price_range[i]
                        price_text = f", and price lower than {price_upper:.2f} dollars"
                    else:
                        price_upper = 1000000
                        price_text = ""
                else:
                    price_upper = 1000000
                goals.append(
                    {
                        "asin": asin,
                        "category": item["category"],
                        "query": item["query"],
                        "name": item["name"],
                        "product_category": item["product_category"],
                        "instruction_text": product["instruction"].strip(".") + price_text,
                        "attributes": attributes,
                        "price_upper": price_upper,
                        "goal_options": product["instruction_options"],
                    }
                )
            for att in attributes:
                cnt_atts[att] += 1
    for goal in goals:
        goal["weight"] = 1
    return goals


def get_synthetic_goals(all_products, product_prices):
    goals = []
    cnt_atts = defaultdict(int)
    random.seed(233)
    for product in all_products:
        if "instruction_text" not in product or product["instruction_text"] is None:
            continue
        product_goals = []
        asin = product["asin"]
        attributes = product["instruction_attributes"]
        assert len(attributes) > 0
        if product_prices is not None:
            price = product_prices[asin]
            price_range = [p for p in PRICE_RANGE if p > price][:4]
            if len(price_range) >= 2:
                _, price_upper = sorted(random.sample(price_range, 2))
                price_text = f", and price lower than {price_upper:.2f} dollars"
            else:
                price_upper = 1000000
                price_text = ""
        else:
            price_upper = 1000000
            price_text = ""
        instruction_text = product["instruction_text"]
        options = product["options"]
        option_names = sorted(options)
        combinations = list(
            itertools.product(*(options[option_name] for option_name in option_names))
        )
        for combination in combinations:
            goal_options = dict()
            for i, o in enumerate(combination):
                goal_options[option_names[i]] = o
            option_text = ", and ".join([f"{k}: {v}" for k, v in goal_options.items()])
            option_text = " with " + option_text if option_text else ""
            product_goals.append(
                {
                    "asin": asin,
                    "category": product["category"],
                    "query": product["query"],
                    "name": product["name"],
                    "product_category": product["product_category"],
                    "instruction_text": f"{instruction_text}{option_text}{price_text}",
                    "attributes": attributes,
                    "price_upper": price_upper,
                    "goal_options": goal_options,
                    "name": product["Title"],  # noqa: F601 - WebShop sets it twice
                }
            )
            for att in attributes:
                cnt_atts[att] += 1
        goals += product_goals
    for goal in goals:
        goal["weight"] = sum(1.0 / cnt_atts[att] for att in goal["attributes"]) / len(
            goal["attributes"]
        )
    return goals


def served_goals(data_dir: Path, human_goals: bool, product_prices: dict[str, float]) -> list:
    """``SimServer.goals``: the goals built, then shuffled with seed 233."""
    all_products = load_products(data_dir, human_goals)
    build = get_human_goals if human_goals else get_synthetic_goals
    goals = build(all_products, product_prices)
    random.seed(233)
    random.shuffle(goals)
    return goals
