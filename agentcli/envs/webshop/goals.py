"""WebShop's synthetic goals: every product with an instruction, times every combination of
its options, as WebShop builds them, in the order AgentGym's server serves them.

A goal's text is the instruction, then " with k: v, and k: v" over the options in name
order, then ", and price lower than X.00 dollars", X drawn from the four multiples of 10
above the product's price. AgentGym seeds Python's RNG with 233 before building the goals
and again before shuffling them, so with WebShop's real files ``webshop_<n>`` is AgentGym's
goal n.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from agentcli.envs.webshop.catalog import Product

GOAL_SEED = 233
PRICE_STEPS = [10.0 * i for i in range(1, 100)]
NO_PRICE_BOUND = 1000000


@dataclass(frozen=True)
class Goal:
    product: Product
    text: str
    attributes: tuple[str, ...]
    options: dict[str, str]  # option name -> the value asked for
    price_upper: float


def _price_bound(price: float, rng: random.Random) -> tuple[float, str]:
    above = [step for step in PRICE_STEPS if step > price][:4]
    if len(above) < 2:
        return NO_PRICE_BOUND, ""
    _, upper = sorted(rng.sample(above, 2))
    return upper, f", and price lower than {upper:.2f} dollars"


def synthetic_goals(products: list[Product]) -> list[Goal]:
    rng = random.Random(GOAL_SEED)
    goals: list[Goal] = []
    for product in products:
        if product.instruction is None:
            continue
        price_upper, price_text = _price_bound(product.price, rng)
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
                )
            )
    random.Random(GOAL_SEED).shuffle(goals)
    return goals
