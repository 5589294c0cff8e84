"""A real OpenAI-compatible chat-completions server on loopback, for tests of model policies.

It speaks the wire format vLLM, SGLang and OpenAI share (``POST /v1/chat/completions``,
``GET /v1/models``, errors as ``{"error": {"message", "type", "code"}}``), answers with a
reply function the test gives, and fails on demand the way real endpoints do: 429 and 500
with a ``retry-after-ms`` header, 401 for a bad key, 400 "maximum context length", or a
reply slower than the client's timeout. Every request is recorded so tests can check what
was sent and how many requests were in flight at once.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from tests.servers import free_port

Fault = Literal["rate_limit", "server_error", "unauthorized", "context_length", "slow"]
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


class _Message(BaseModel):
    role: str
    content: str


class _ChatRequest(BaseModel):
    model: str
    messages: list[_Message]
    max_tokens: int | None = None
    temperature: float | None = None
    seed: int | None = None


@dataclass
class RecordedRequest:
    body: dict[str, Any]
    authorization: str | None


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
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._faults: deque[Fault | None] = deque()
        self._lock = threading.Lock()  # the test's thread sets faults, the server's pops them

    def fail_next(self, fault: Fault, times: int = 1, *, after: int = 0) -> None:
        """The next ``times`` requests, once ``after`` more have been answered, fail so."""
        with self._lock:
            self._faults.extend([None] * after + [fault] * times)

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    async def _chat(self, body: _ChatRequest, request: Request) -> JSONResponse:
        self.requests.append(
            RecordedRequest(body.model_dump(), request.headers.get("authorization"))
        )
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
            text = self.reply(messages)
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
def openai_server(reply: ReplyFunction, *, model: str = "m") -> Iterator[FakeOpenAI]:
    """The server running in a background thread until the block ends."""
    fake = FakeOpenAI(reply, model=model)
    port = free_port()
    config = uvicorn.Config(fake.app(), port=port, log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        threading.Event().wait(0.02)
    fake.url = f"http://127.0.0.1:{port}/v1"
    try:
        yield fake
    finally:
        server.should_exit = True
        thread.join(timeout=10)
