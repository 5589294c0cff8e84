"""The cost ledger's arithmetic and budget, and the reply cache's keys and persistence."""

from __future__ import annotations

import logging

import pytest

from agentcli.data.jsonl import append_records
from agentcli.errors import BudgetExceededError, UsageError
from agentcli.teacher import DEFAULT_PRICES, Price, TeacherConfig
from agentcli.teacher.cache import CachedReply, ResponseCache, request_key
from agentcli.teacher.ledger import (
    CHARS_PER_TOKEN,
    TOKENS_PER_MESSAGE,
    CostLedger,
    LedgerEntry,
    estimate_tokens,
)

PRICES = {"m": Price(input=2.0, output=8.0)}


def entry(cost: float, **fields) -> LedgerEntry:
    values = {"time": "t", "stage": "correct", "item_id": "textcraft_0", "model": "m",
              "request": "ab", "retries": 0, "repair": 0, "outcome": "ok"}  # fmt: skip
    return LedgerEntry(**{**values, "cost_usd": cost, **fields})


def test_tokens_are_estimated_generously_from_characters():
    messages = [{"role": "user", "content": "x" * 31}, {"role": "assistant", "content": ""}]
    assert estimate_tokens(messages) == -(-31 // CHARS_PER_TOKEN) + 2 * TOKENS_PER_MESSAGE


def test_cost_is_per_million_tokens(tmp_path):
    ledger = CostLedger(tmp_path / "ledger.jsonl", PRICES, "m", None)
    assert ledger.cost(1_000_000, 500_000) == pytest.approx(2.0 + 4.0)


def test_a_call_that_might_not_fit_is_refused_and_so_is_every_later_one(tmp_path):
    ledger = CostLedger(tmp_path / "ledger.jsonl", PRICES, "m", max_cost=1.0)
    first = ledger.reserve(100_000, 50_000)  # at most $0.2 + $0.4
    assert first == pytest.approx(0.6)
    with pytest.raises(BudgetExceededError, match=r"--max-cost \$1"):
        ledger.reserve(100_000, 50_000)  # 0.6 reserved + 0.6 > 1
    ledger.settle(first, entry(0.3))
    assert (ledger.spent, ledger.reserved) == (pytest.approx(0.3), pytest.approx(0.0))
    with pytest.raises(BudgetExceededError):  # it would fit now, but the stage is stopping
        ledger.reserve(1, 1)


def test_spending_counts_what_earlier_runs_logged(tmp_path):
    path = tmp_path / "ledger.jsonl"
    append_records(path, [entry(0.25), entry(0.5, outcome="http_429", cost_usd=0.0), entry(0.5)])
    ledger = CostLedger(path, PRICES, "m", max_cost=1.0)
    assert ledger.spent == pytest.approx(0.75)
    with pytest.raises(BudgetExceededError):
        ledger.reserve(100_000, 50_000)


def test_an_unpriced_model_costs_nothing_with_a_warning_but_cannot_have_a_budget(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        ledger = CostLedger(tmp_path / "l.jsonl", PRICES, "other", None)
    assert ledger.cost(10**6, 10**6) == 0.0
    assert [r.getMessage() for r in caplog.records] == [
        "no price for model 'other': its calls are counted as costing $0"
    ]
    with pytest.raises(UsageError, match="teacher.prices"):
        CostLedger(tmp_path / "l.jsonl", PRICES, "other", max_cost=1.0)


def test_configured_prices_add_to_and_override_the_defaults():
    config = TeacherConfig(
        kind="oracle", prices={"gpt-4o": Price(input=1, output=1), "mine": Price(input=0, output=3)}
    )
    table = config.price_table()
    assert table["gpt-4o"] == Price(input=1, output=1)
    assert table["mine"].output == 3 and table["gpt-4o-mini"] == DEFAULT_PRICES["gpt-4o-mini"]


def test_the_request_key_covers_every_field_and_ignores_key_order():
    request = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}
    assert request_key(request) == request_key(dict(reversed(list(request.items()))))
    assert request_key(request) != request_key({**request, "temperature": 0.5})
    assert request_key(request) != request_key({**request, "model": "n"})
    assert len(request_key(request)) == 64


def test_cached_replies_survive_a_restart_and_forgotten_ones_do_not(tmp_path):
    path = tmp_path / "cache.jsonl"
    cache = ResponseCache(path)
    for key in ("a", "b", "c"):
        cache.put(CachedReply(key=key, text=f"reply {key}", prompt_tokens=1, completion_tokens=2))
    cache.forget({"b", "unknown"})
    reopened = ResponseCache(path)
    assert len(reopened) == 2 and reopened.get("b") is None
    assert reopened.get("c") == CachedReply(key="c", text="reply c", prompt_tokens=1,
                                            completion_tokens=2)  # fmt: skip
