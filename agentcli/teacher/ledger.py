"""What every teacher call cost, and the budget that stops a stage before it overspends.

The ledger is a JSONL file with one line per HTTP attempt, failed ones included: tokens in
and out, dollars, seconds, and which retry or repair it was. Its total is the money spent on
that output so far, across reruns; ``--max-cost`` caps that total. Before each call the
ledger reserves the most the call can cost (its prompt, estimated from its length, plus
``max_tokens`` of reply) and refuses the call when spent + reserved would pass the cap, so
concurrent calls cannot overshoot together.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from agentcli.data.jsonl import append_records, read_records
from agentcli.errors import BudgetExceededError, UsageError
from agentcli.records import Record
from agentcli.teacher.config import Price

log = logging.getLogger("agentgym.teacher")

# Tokenizers differ by model and none is at hand for an arbitrary endpoint. GPT tokenizers
# average about 4 characters a token on English and nearer 3 on JSON and code; counting 3
# over-estimates, which keeps --max-cost a ceiling rather than a guess.
CHARS_PER_TOKEN = 3
TOKENS_PER_MESSAGE = 4  # the role and separators each message adds


class LedgerEntry(Record):
    """One HTTP attempt. ``retries``: failed attempts of the same request before this one;
    ``repair``: 0 for an item's first request, n for its n-th repair."""

    time: str
    stage: str
    item_id: str
    model: str
    request: str  # the first 16 hex digits of the cache key: links a request's attempts
    retries: int
    repair: int
    outcome: str  # ok | invalid | timeout | unreachable | http_<status> | format_refused
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0


def estimate_tokens(messages: Sequence[Mapping[str, str]]) -> int:
    return sum(
        math.ceil(len(message["content"]) / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE
        for message in messages
    )


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class CostLedger:
    def __init__(
        self, path: Path, prices: Mapping[str, Price], model: str, max_cost: float | None
    ) -> None:
        self.path = path
        self.max_cost = max_cost
        self.price = prices.get(model)
        if self.price is None:
            if max_cost is not None:
                raise UsageError(
                    f"--max-cost needs the price of {model!r}: set teacher.prices with its"
                    " input and output $ per 1M tokens (see docs/teacher.md)"
                )
            log.warning("no price for model %r: its calls are counted as costing $0", model)
        entries = read_records(path, LedgerEntry) if path.exists() else []
        self.spent = sum(entry.cost_usd for entry in entries)
        self.reserved = 0.0
        self.exhausted = False  # once a call is refused, every later one is too: a clean stop

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        if self.price is None:
            return 0.0
        return (prompt_tokens * self.price.input + completion_tokens * self.price.output) / 1e6

    def reserve(self, prompt_tokens: int, max_tokens: int) -> float:
        """Hold the most a call can cost; raises ``BudgetExceededError`` if it might not fit."""
        most = self.cost(prompt_tokens, max_tokens)
        if self.max_cost is not None and (
            self.exhausted or self.spent + self.reserved + most > self.max_cost
        ):
            self.exhausted = True
            raise BudgetExceededError(
                f"stopped before exceeding --max-cost ${self.max_cost:g}"
                f" (spent ${self.spent:.4f} so far)"
            )
        self.reserved += most
        return most

    def settle(self, reserved: float, entry: LedgerEntry) -> None:
        """Replace a reservation by what the attempt cost, and log the attempt."""
        self.reserved -= reserved
        self.spent += entry.cost_usd
        append_records(self.path, [entry])
