"""WebShop's goals, built as the WebShop that AgentGym's server runs builds them, in the order
it serves them.

Synthetic goals (what AgentGym's server serves): every product with an instruction, times
every combination of its options. A goal's text is the instruction, then " with k: v, and
k: v" over the options in name order, then ", and price lower than X.00 dollars", X drawn
from the four multiples of 10 above the product's price.

Human goals (``items_human_ins.json``, what ``WebAgentTextEnv(human_goals=1)`` serves):
every instruction a person wrote for a product, with at least one attribute, four times over,
once for each of the four multiples of 10 above the product's price (AgentGym's copy of
WebShop's ``get_human_goals``; WebShop's own draws one bound at random instead). The goal's
options are the values the person chose (``instruction_options``).

AgentGym seeds Python's RNG with 233 before building synthetic goals and again before
shuffling the goals, so with WebShop's real files ``webshop_<n>`` is AgentGym's goal n.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentcli.envs.webshop.catalog import Product

GOAL_SEED = 233
PRICE_STEPS = [10.0 * i for i in range(1, 100)]
NO_PRICE_BOUND = 1000000
HUMAN_BOUNDS = 4  # goals per human instruction: one per price bound


@dataclass(frozen=True)
class Goal:
    product: Product
    text: str
    attributes: tuple[str, ...]
    options: dict[str, str]  # what to select: option name -> value
    price_upper: float
    # what WebShop's reward compares the chosen values with: a synthetic goal's options as
    # (name, value) pairs (its dict's items), a human goal's chosen values
    wanted_options: tuple[Any, ...]


def _bounds(price: float) -> list[float]:
    return [step for step in PRICE_STEPS if step > price][:4]


def _price_text(upper: float) -> str:
    return f", and price lower than {upper:.2f} dollars"


def _random_bound(price: float, rng: random.Random) -> tuple[float, str]:
    above = _bounds(price)
    if len(above) < 2:
        return NO_PRICE_BOUND, ""
    _, upper = sorted(rng.sample(above, 2))
    return upper, _price_text(upper)


def synthetic_goals(products: list[Product]) -> list[Goal]:
    rng = random.Random(GOAL_SEED)
    goals: list[Goal] = []
    for product in products:
        if product.instruction is None:
            continue
        price_upper, price_text = _random_bound(product.price, rng)
        names = sorted(product.options)
        for values in itertools.product(*(product.options[name] for name in names)):
            options = dict(zip(names, values, strict=True))
            option_text = ", and ".join(f"{k}: {v}" for k, v in options.items())
            option_text = f" with {option_text}" if option_text else ""
            goals.append(
                Goal(
                    product=product,
                    text=f"{product.instruction}{option_text}{price_text}",
                    attributes=product.instruction_attributes,
                    options=options,
                    price_upper=price_upper,
                    wanted_options=tuple(options.items()),
                )
            )
    return _shuffled(goals)


def _selections(product: Product, chosen: Sequence[str] | Mapping[str, str]) -> dict[str, str]:
    """The options a human goal asks to select: a value's option is the last one that lists
    it, as a click on the item page maps it; a value the product does not list is left out."""
    if isinstance(chosen, Mapping):
        return dict(chosen)
    selections = {}
    for value in chosen:
        owners = [name for name, values in product.options.items() if value in values]
        if owners:
            selections[owners[-1]] = value
    return selections


def human_goals(products: list[Product], instructions: Mapping[str, Any]) -> list[Goal]:
    """Goals from ``items_human_ins.json`` (``{asin: [{instruction, instruction_attributes,
    instruction_options}]}``) for the products it names, in catalog order."""
    goals: list[Goal] = []
    for product in products:
        for written in instructions.get(product.asin) or ():
            attributes = tuple(written["instruction_attributes"])
            if not attributes:
                continue  # WebShop skips an instruction without attributes
            chosen = written["instruction_options"]
            wanted = tuple(chosen.items() if isinstance(chosen, Mapping) else chosen)
            text = written["instruction"].strip(".")
            bounds = _bounds(product.price)
            for bound in range(HUMAN_BOUNDS):
                if len(bounds) < 2:
                    upper, price_text = NO_PRICE_BOUND, ""
                elif bound < len(bounds):
                    upper, price_text = bounds[bound], _price_text(bounds[bound])
                else:
                    continue
                goals.append(
                    Goal(
                        product=product,
                        text=text + price_text,
                        attributes=attributes,
                        options=_selections(product, chosen),
                        price_upper=upper,
                        wanted_options=wanted,
                    )
                )
    return _shuffled(goals)


def _shuffled(goals: list[Goal]) -> list[Goal]:
    """The goals in the order AgentGym's server serves them (seed 233, after building)."""
    random.Random(GOAL_SEED).shuffle(goals)
    return goals
