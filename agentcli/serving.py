"""The HTTP server under every server agentgym starts (env servers, ``agentgym view``): uvicorn,
with two bounds uvicorn does not have.

uvicorn closes a connection left idle after an answer (its keep-alive timeout) and reads a
body as slowly as it comes (env servers bound that themselves: 408); but a connection that
has not finished sending a request's head (its request line and headers) is held for as long
as the client likes, and it accepts as many connections as clients open (``limit_concurrency``
only answers their requests with 503 and keeps the connections). Here:

- a connection has ``head_timeout_s`` to send each request's head, counted from its opening
  or from the previous answer; then it is closed;
- a connection opened while ``max_connections`` are open (HTTP and WebSocket together) is
  answered 503 and closed at once.

Both live in a subclass of the HTTP protocol uvicorn picks (httptools' when installed, else
h11's), which reads two of its attributes (``cycle``: the request in progress, and the
``on_response_complete`` hook). This module is the one that reaches into uvicorn;
tests/integration/test_serving.py holds it to both implementations.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import uvicorn
from uvicorn.protocols.http.auto import AutoHTTPProtocol

HEAD_TIMEOUT_S = 10.0  # browsers and our clients send a request's head at once
MAX_CONNECTIONS = 256


class _Bounds:
    """The two bounds, over one of uvicorn's HTTP protocols (see the module)."""

    head_timeout_s: float
    max_connections: int
    # uvicorn's protocol's, read here
    connections: set[Any]
    cycle: Any
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._head_timer: asyncio.TimerHandle | None = None
        if len(self.connections) > self.max_connections:
            transport.write(_full(self.max_connections))
            transport.close()
            return
        self._await_head()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        if not self.transport.is_closing():
            self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        super().connection_lost(exc)  # type: ignore[misc]

    def _await_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_due, self.cycle)

    def _head_due(self, cycle_then: Any) -> None:
        """Close the connection unless a request's head has come since the timer was set (a
        new cycle), a request is still being answered, or it has become a WebSocket's."""
        waiting = self.cycle is cycle_then and (cycle_then is None or cycle_then.response_complete)
        if waiting and self.transport.get_protocol() is self and not self.transport.is_closing():
            self.transport.close()


def _full(max_connections: int) -> bytes:
    body = json.dumps(
        {"error": f"this server holds {max_connections} connections at most: retry later"}
    ).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


def bounded_http(
    head_timeout_s: float, max_connections: int, base: type[asyncio.Protocol] = AutoHTTPProtocol
) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol ``base`` (the one uvicorn picks, by default) with the bounds."""
    bounds = {"head_timeout_s": head_timeout_s, "max_connections": max_connections}
    return type(f"Bounded{base.__name__}", (_Bounds, base), bounds)


def server(
    app: Any,
    *,
    head_timeout_s: float = HEAD_TIMEOUT_S,
    max_connections: int = MAX_CONNECTIONS,
    **options: Any,
) -> uvicorn.Server:
    """A uvicorn server of ``app`` within the bounds; ``options`` are ``uvicorn.Config``'s."""
    http = bounded_http(head_timeout_s, max_connections)
    return uvicorn.Server(uvicorn.Config(app, http=http, **options))
