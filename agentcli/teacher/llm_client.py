"""One client for every LLM teacher stage: bounded concurrency, explicit retries, structured
replies validated by pydantic, a repair conversation for unusable replies, the reply cache
and the cost ledger.

What is retried, and how often, is ours rather than the ``openai`` client's (it runs with
``max_retries=0``), so that every attempt lands in the ledger: a request is tried again after
a timeout, a dropped connection or HTTP 408/409/429/5xx, up to ``max_retries`` times, waiting
what the server asks (``retry-after-ms`` / ``retry-after``) or an exponential backoff with
jitter. A reply that is not what was asked (bad JSON, a missing field, the wrong number of
steps, an action the env does not offer) is sent back with what is wrong with it, up to
``max_repairs`` times; after that the item fails with the last problem as its reason.

Several endpoints (replicas of one model, launched by the stage) take the items in turn; an
item's retries and repairs stay with its replica.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from agentcli.conversation import Message
from agentcli.endpoints import (
    ModelEndpoints,
    api_key,
    async_client,
    endpoint_error,
    is_retried,
    server_message,
)
from agentcli.errors import InvalidReplyError
from agentcli.teacher.cache import CachedReply, ResponseCache, request_key
from agentcli.teacher.config import TeacherConfig
from agentcli.teacher.ledger import CostLedger, LedgerEntry, estimate_tokens, now

log = logging.getLogger("agentgym.teacher")

ReplyT = TypeVar("ReplyT", bound=BaseModel)

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 8.0
RETRY_AFTER_CAP_S = 60.0  # a server asking for longer is treated as asking for this
REPAIR_REQUEST = (
    "That reply cannot be used: {problem}. Answer again with one JSON object that fixes this"
    " and follows the format asked for, and nothing else."
)


class NotSent(Exception):
    """Raised by a dry-run client in place of sending a request: its cost was estimated."""


@dataclass
class ClientStats:
    sent: int = 0  # HTTP attempts, failed ones included
    retries: int = 0
    repairs: int = 0
    cached: int = 0  # requests answered from the cache
    estimated_cost: float = 0.0  # dry run: what the requests not cached would cost at most


@dataclass
class _Answer:
    text: str
    key: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    retries: int = 0
    reserved: float = 0.0
    fresh: bool = True  # False: from the cache, so not in the ledger again


class TeacherClient:
    def __init__(
        self, config: TeacherConfig, endpoints: ModelEndpoints, *, ledger: Path, cache: Path
    ) -> None:
        self.base_urls = endpoints.base_urls
        self.model_name = endpoints.model_name
        self._config = config
        self._structured = config.structured_output
        key = api_key(config.api_key)
        self._clients = [
            async_client(url, key, timeout_s=config.timeout_s, max_retries=0)
            for url in self.base_urls
        ]
        self._turns = itertools.cycle(range(len(self._clients)))
        self._slots = asyncio.Semaphore(config.concurrency)
        self.cache = ResponseCache(cache)
        self.ledger = CostLedger(ledger, config.price_table(), self.model_name, config.max_cost)
        self.stats = ClientStats()

    async def ask(
        self,
        messages: Sequence[Message],
        reply_model: type[ReplyT],
        *,
        stage: str,
        item_id: str,
        check: Callable[[ReplyT], None] | None = None,
    ) -> ReplyT:
        """The reply to ``messages`` as a ``reply_model`` that passes ``check`` (which raises
        ``ValueError`` saying what is wrong); ``stage`` and ``item_id`` go into the ledger."""
        conversation: list[Message] = list(messages)
        problem = ""
        unusable: set[str] = set()
        replica = next(self._turns)
        for repair in range(self._config.max_repairs + 1):
            if repair:
                self.stats.repairs += 1
            answer = await self._answer(conversation, reply_model, stage, item_id, repair, replica)
            unusable.add(answer.key)
            try:
                reply = parse_reply(answer.text, reply_model)
                if check is not None:
                    check(reply)
            except ValueError as error:  # pydantic's ValidationError is a ValueError
                problem = describe_problem(error)
                self._settle(answer, stage, item_id, repair, "invalid", problem)
                conversation = [
                    *conversation,
                    {"role": "assistant", "content": answer.text},
                    {"role": "user", "content": REPAIR_REQUEST.format(problem=problem)},
                ]
                continue
            self._settle(answer, stage, item_id, repair, "ok")
            return reply
        self.cache.forget(unusable)  # a retry of this item should ask afresh, not replay this
        raise InvalidReplyError(
            f"the reply was unusable after {self._config.max_repairs} repairs: {problem}"
        )

    async def aclose(self) -> None:
        for client in self._clients:
            await client.close()

    def _request(self, conversation: list[Message], reply_model: type[BaseModel]) -> dict:
        request: dict[str, Any] = {
            "model": self.model_name,
            "messages": conversation,
            "max_tokens": self._config.max_tokens,
            "temperature": self._config.temperature,
        }
        if self._structured:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": reply_model.__name__,
                    "schema": reply_model.model_json_schema(),
                },
            }
        return request

    async def _answer(
        self,
        conversation: list[Message],
        reply_model: type[BaseModel],
        stage: str,
        item_id: str,
        repair: int,
        replica: int,
    ) -> _Answer:
        """The reply to one request: from the cache, or sent to endpoint ``replica`` and
        retried as the module says."""
        import openai

        retries = 0
        while True:
            request = self._request(conversation, reply_model)
            key = request_key(request)
            cached = self.cache.get(key)
            if cached is not None:
                self.stats.cached += 1
                return _from_cache(cached)
            prompt_estimate = estimate_tokens(conversation)
            if self._config.dry_run:
                max_cost = self.ledger.cost(prompt_estimate, self._config.max_tokens)
                self.stats.estimated_cost += max_cost
                raise NotSent
            reserved = self.ledger.reserve(prompt_estimate, self._config.max_tokens)
            started = time.perf_counter()
            try:
                async with self._slots:
                    self.stats.sent += 1
                    completion = await self._clients[replica].chat.completions.create(**request)
            except openai.OpenAIError as exc:
                failed = _Answer(
                    text="",
                    key=key,
                    latency_s=time.perf_counter() - started,
                    retries=retries,
                    reserved=reserved,
                )
                refused_format = self._structured and _refuses_response_format(exc)
                outcome = "format_refused" if refused_format else _outcome(exc)
                self._settle(failed, stage, item_id, repair, outcome, _error_text(exc))
                if refused_format:
                    # Not every OpenAI-compatible server takes a JSON schema: ask for JSON in
                    # words only (the prompt always says so), for this and every later request.
                    log.warning(
                        "%s does not accept response_format: asking for JSON in the prompt only",
                        self.base_urls[replica],
                    )
                    self._structured = False
                    continue
                if _retryable(exc) and retries < self._config.max_retries:
                    retries += 1
                    self.stats.retries += 1
                    await asyncio.sleep(_backoff(exc, retries))
                    continue
                raise endpoint_error(
                    exc,
                    base_url=self.base_urls[replica],
                    model_name=self.model_name,
                    timeout_s=self._config.timeout_s,
                    tries=retries + 1,
                    key_setting="teacher.api_key",
                ) from exc
            latency = time.perf_counter() - started
            text = completion.choices[0].message.content or ""
            usage = completion.usage
            reply = CachedReply(
                key=key,
                text=text,
                # A server that reports no usage is charged by the same estimate as the budget.
                prompt_tokens=usage.prompt_tokens if usage else prompt_estimate,
                completion_tokens=usage.completion_tokens
                if usage
                else estimate_tokens([{"content": text}]),
            )
            self.cache.put(reply)
            return _Answer(
                text=text,
                key=key,
                prompt_tokens=reply.prompt_tokens,
                completion_tokens=reply.completion_tokens,
                latency_s=latency,
                retries=retries,
                reserved=reserved,
            )

    def _settle(
        self,
        answer: _Answer,
        stage: str,
        item_id: str,
        repair: int,
        outcome: str,
        error: str | None = None,
    ) -> None:
        if not answer.fresh:
            return
        entry = LedgerEntry(
            time=now(),
            stage=stage,
            item_id=item_id,
            model=self.model_name,
            request=answer.key[:16],
            retries=answer.retries,
            repair=repair,
            outcome=outcome,
            error=error,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            cost_usd=self.ledger.cost(answer.prompt_tokens, answer.completion_tokens),
            latency_s=round(answer.latency_s, 4),
        )
        self.ledger.settle(answer.reserved, entry)


def parse_reply(text: str, reply_model: type[ReplyT]) -> ReplyT:
    """The JSON object in ``text`` (models wrap it in prose or code fences) as ``reply_model``."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("it holds no JSON object")
    return reply_model.model_validate_json(text[start : end + 1])


def describe_problem(error: ValueError) -> str:
    """One line for the model: each field that is wrong and why (the first three)."""
    if not isinstance(error, ValidationError):
        return str(error)
    problems = []
    for problem in error.errors(include_url=False)[:3]:
        where = ".".join(str(part) for part in problem["loc"])
        problems.append(f"{where}: {problem['msg']}" if where else problem["msg"])
    more = error.error_count() - len(problems)
    return "; ".join(problems) + (f"; and {more} more" if more > 0 else "")


def _from_cache(cached: CachedReply) -> _Answer:
    return _Answer(
        text=cached.text,
        key=cached.key,
        prompt_tokens=cached.prompt_tokens,
        completion_tokens=cached.completion_tokens,
        fresh=False,
    )


def _retryable(exc: Exception) -> bool:
    import openai

    if isinstance(exc, openai.APIConnectionError):  # timeouts too: a subclass
        return True
    return isinstance(exc, openai.APIStatusError) and is_retried(exc.status_code)


def _refuses_response_format(exc: Exception) -> bool:
    """A 400 or 422 that names the response format: the server does not do structured output."""
    import openai

    if not isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
        return False
    text = server_message(exc).lower()
    return "response_format" in text or "json_schema" in text


def _outcome(exc: Exception) -> str:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "unreachable"
    if isinstance(exc, openai.APIStatusError):
        return f"http_{exc.status_code}"
    return "error"


def _error_text(exc: Exception) -> str:
    import openai

    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {server_message(exc)}"
    return server_message(exc)


def _backoff(exc: Exception, retry: int) -> float:
    """Seconds before retry number ``retry``: the server's ``retry-after-ms`` or
    ``retry-after`` when it sent one, else exponential with jitter (so that many requests
    refused together do not all come back at the same moment)."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            return min(float(headers[name]) / scale, RETRY_AFTER_CAP_S)
        except (KeyError, ValueError):
            continue
    return min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** (retry - 1)) * random.uniform(0.5, 1.0)
