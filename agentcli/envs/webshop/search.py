"""WebShop's product search: BM25 over each product's text, as its Lucene index ranks it,
and its debugging searches.

WebShop indexes, per product, lower(title + description + first bullet + options) with
Lucene's English analyzer and BM25 (k1 0.9, b 0.4), and returns the top 50. bm25s with
Lucene's scoring, Lucene's 33 stopwords, the Porter stemmer and one-character tokens kept
agreed with the real index on the top hit for 99.3 % of 400 queries. Ties keep index order,
as Lucene's do; products no query term matches are not returned.

WebShop's engine (``get_top_n_product_from_keywords``) reads the keywords split on single
spaces, and a first word of ``<r>``, ``<a>``, ``<c>`` or ``<q>`` asks for a debugging search
instead: 50 products drawn at random; every product with the attribute the other words name;
every product of the category the second word names; every product of the search query the
other words name (all of them, in catalog order, not only 50).
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict
from collections.abc import Iterable
from functools import lru_cache

import numpy as np

from agentcli.envs.webshop.catalog import Product

TOP_N = 50
K1, B = 0.9, 0.4
TOKEN_PATTERN = r"(?u)\b\w+\b"
LUCENE_STOPWORDS = (
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with",
)  # fmt: skip


def indexed_text(product: Product) -> str:
    options = ", and ".join(
        f"{name}: {', '.join(values)}" for name, values in product.options.items()
    )
    first_bullet = product.bullets[0] if product.bullets else ""
    return f"{product.title} {product.description} {first_bullet} {options}".lower()


class SearchIndex:
    def __init__(self, products: list[Product]) -> None:
        import bm25s
        import Stemmer

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # it sets itself to DEBUG

        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("porter")
        self._products = products
        corpus = self._tokens([indexed_text(product) for product in products])
        self._retriever = bm25s.BM25(method="lucene", k1=K1, b=B)
        self._retriever.index(corpus, show_progress=False)
        self._vocabulary = set(self._retriever.vocab_dict)

    def _tokens(self, texts: list[str]) -> list[list[str]]:
        return self._bm25s.tokenize(
            texts,
            lower=True,
            token_pattern=TOKEN_PATTERN,
            stopwords=list(LUCENE_STOPWORDS),
            stemmer=self._stemmer,
            return_ids=False,
            show_progress=False,
        )

    def search(self, keywords: str) -> list[Product]:
        """The top products for ``keywords``, best first."""
        terms = [term for term in self._tokens([keywords])[0] if term in self._vocabulary]
        if not terms:
            return []
        scores = self._retriever.get_scores(terms)
        order = np.argsort(-scores, kind="stable")[:TOP_N]
        return [self._products[i] for i in order if scores[i] > 0]


def _grouped(pairs: Iterable[tuple[str, Product]]) -> dict[str, list[Product]]:
    groups: dict[str, list[Product]] = defaultdict(list)
    for key, product in pairs:
        groups[key].append(product)
    return dict(groups)


class ProductSearch:
    """What WebShop's search box returns: a debugging search, or the BM25 top 50 (cached)."""

    def __init__(self, products: list[Product]) -> None:
        self._products = products
        self.ranked = lru_cache(maxsize=4096)(SearchIndex(products).search)
        self._by_attribute = _grouped((a, p) for p in products for a in dict.fromkeys(p.attributes))
        self._by_category = _grouped((p.category, p) for p in products)
        self._by_query = _grouped((p.query, p) for p in products)

    def search(self, keywords: str, rng: random.Random) -> list[Product]:
        """The results for ``keywords``; ``<r>`` draws from ``rng`` (WebShop: from its global
        RNG, failing for a catalog of fewer than 50 products).

        Where WebShop's text environment fails, these answer: ``<a>`` (it passes the engine
        no attribute index: a TypeError) is answered as WebShop's web app answers it, and
        ``<c>`` without a category (an IndexError) finds nothing."""
        first, *rest = keywords.split(" ")
        if first == "<r>":
            return rng.sample(self._products, k=min(TOP_N, len(self._products)))
        if first == "<a>":
            return self._by_attribute.get(" ".join(rest).strip(), [])
        if first == "<c>":
            return self._by_category.get(rest[0].strip() if rest else "", [])
        if first == "<q>":
            return self._by_query.get(" ".join(rest).strip(), [])
        return self.ranked(keywords)
