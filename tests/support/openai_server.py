"""A real OpenAI-compatible chat-completions server on loopback, for tests of model policies.

It speaks the wire format vLLM, SGLang and OpenAI share (``POST /v1/chat/completions``,
``GET /v1/models``, errors as ``{"error": {"message", "type", "code"}}``), answers with a
reply function the test gives, and fails on demand the way real endpoints do: 429 and 500
with a ``retry-after-ms`` header, 401 for a bad key, 400 "maximum context length", a reply
slower than the client's timeout, or a reply that is not what was asked for (cut off
mid-JSON, or one entry short in its ``steps`` list). Faults come in order (``fail_next``) or
at random on a fraction of requests (``fail_randomly``). It takes ``response_format`` as
vLLM and OpenAI do, or refuses it as servers without structured output do. Every request is
recorded (its JSON body as sent, and the status answered) so tests can check what was sent
and how many requests were in flight at once.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError

from tests.support.servers import app_in_thread

Fault = Literal[
    "rate_limit",
    "server_error",
    "unauthorized",
    "context_length",
    "slow",
    "invalid_json",
    "drop_step",
]
ReplyFunction = Callable[[list[dict[str, str]]], str]

RETRY_AFTER_MS = "10"  # real endpoints send this; it keeps the client's retries fast
_ERRORS: dict[str, tuple[int, dict[str, Any]]] = {
    "rate_limit": (429, {"message": "Rate limit reached", "type": "requests", "code": None}),
    "server_error": (500, {"message": "The server had an error", "type": "server_error"}),
    "unauthorized": (
        401,
        {
            "message": "Incorrect API key provided",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        },
    ),
    "context_length": (
        400,
        {
            "message": "This model's maximum context length is 4096 tokens. However, your "
            "messages resulted in 5000 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        },
    ),
}
_REFUSED_FORMAT = {
    "message": "Unrecognized request argument supplied: response_format",
    "type": "invalid_request_error",
    "param": "response_format",
}


class _Message(BaseModel):
    role: str
    content: str


class _ChatRequest(BaseModel):
    model: str
    messages: list[_Message]
    max_tokens: int | None = None
    temperature: float | None = None
    seed: int | None = None
    response_format: dict[str, Any] | None = None


@dataclass
class RecordedRequest:
    body: dict[str, Any]  # the JSON body exactly as the client sent it
    authorization: str | None
    status: int = 0  # what the server answered (0 while in flight)


def count_tokens(text: str) -> int:
    """The server's token count: whitespace-separated words, so tests can predict it."""
    return len(text.split())


class FakeOpenAI:
    """The server's script and its record; ``url`` is the base URL (``.../v1``)."""

    def __init__(self, reply: ReplyFunction, *, model: str = "m") -> None:
        self.reply = reply
        self.model = model
        self.url = ""
        self.slow_s = 0.0  # how long a "slow" fault takes to answer
        self.latency_s = 0.0  # every reply takes this long (to keep requests in flight)
        self.refuse_response_format = False  # answer 400 to a request that sends one
        self.strict_model = False  # answer 404 to a request for another model, as vLLM does
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._faults: deque[Fault | None] = deque()
        self._fault_rates: dict[Fault, float] = {}
        self._random = random.Random(0)
        self._lock = threading.Lock()  # the test's thread sets faults, the server's pops them

    def fail_next(self, fault: Fault, times: int = 1, *, after: int = 0) -> None:
        """The next ``times`` requests, once ``after`` more have been answered, fail so."""
        with self._lock:
            self._faults.extend([None] * after + [fault] * times)

    def fail_randomly(self, rates: dict[Fault, float], *, seed: int = 0) -> None:
        """Each request not scripted by ``fail_next`` fails with ``fault`` at its rate."""
        with self._lock:
            self._fault_rates = dict(rates)
            self._random = random.Random(seed)

    def _next_fault(self) -> Fault | None:
        with self._lock:
            if self._faults:
                return self._faults.popleft()
            draw = self._random.random()
            for fault, rate in self._fault_rates.items():
                if draw < rate:
                    return fault
                draw -= rate
            return None

    async def _chat(self, request: Request) -> JSONResponse:
        raw = await request.json()
        recorded = RecordedRequest(raw, request.headers.get("authorization"))
        self.requests.append(recorded)
        response = await self._answer(raw)
        recorded.status = response.status_code
        return response

    async def _answer(self, raw: Any) -> JSONResponse:
        try:
            body = _ChatRequest.model_validate(raw)
        except ValidationError as error:
            return JSONResponse({"error": {"message": str(error)}}, status_code=422)
        if self.refuse_response_format and body.response_format is not None:
            return JSONResponse({"error": _REFUSED_FORMAT}, status_code=400)
        if self.strict_model and body.model != self.model:
            unknown = {"message": f"The model `{body.model}` does not exist.", "code": 404}
            return JSONResponse({"error": {**unknown, "type": "NotFoundError"}}, status_code=404)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            fault = self._next_fault()
            await asyncio.sleep(self.slow_s if fault == "slow" else self.latency_s)
            if fault in _ERRORS:
                status, error = _ERRORS[fault]
                return JSONResponse(
                    {"error": error}, status_code=status, headers={"retry-after-ms": RETRY_AFTER_MS}
                )
            messages = [message.model_dump() for message in body.messages]
            text = _spoil(self.reply(messages), fault)
            prompt_tokens = sum(count_tokens(message["content"]) for message in messages)
            return JSONResponse(_completion(body.model, text, prompt_tokens, count_tokens(text)))
        finally:
            self.in_flight -= 1

    def app(self) -> FastAPI:
        app = FastAPI()
        app.post("/v1/chat/completions")(self._chat)

        @app.get("/v1/models")
        def models() -> dict[str, Any]:
            entry = {"id": self.model, "object": "model", "created": 0, "owned_by": "tests"}
            return {"object": "list", "data": [entry]}

        return app


def _spoil(text: str, fault: Fault | None) -> str:
    """The reply a model gets wrong: cut off halfway, or its last step left out."""
    if fault == "invalid_json":
        return text[: len(text) // 2]
    if fault == "drop_step":
        reply = json.loads(text)
        reply["steps"] = reply["steps"][:-1]
        return json.dumps(reply)
    return text


def _completion(model: str, text: str, prompt_tokens: int, completion_tokens: int) -> dict:
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


@contextmanager
def openai_server(
    reply: ReplyFunction, *, model: str = "m", port: int | None = None
) -> Iterator[FakeOpenAI]:
    """The server running in a background thread until the block ends (on ``port``, else a
    free one)."""
    fake = FakeOpenAI(reply, model=model)
    with app_in_thread(fake.app(), port) as url:
        fake.url = f"{url}/v1"
        yield fake
