"""WebShop's product search: BM25 over each product's text, as its Lucene index ranks it.

WebShop indexes, per product, lower(title + description + first bullet + options) with
Lucene's English analyzer and BM25 (k1 0.9, b 0.4), and returns the top 50. bm25s with
Lucene's scoring, Lucene's 33 stopwords, the Porter stemmer and one-character tokens kept
agreed with the real index on the top hit for 99.3 % of 400 queries. Ties keep index order,
as Lucene's do; products no query term matches are not returned.
"""

from __future__ import annotations

import logging

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
