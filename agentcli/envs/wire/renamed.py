"""AgentGym's webshop wire in front of our common routes (plain ASGI, like the server's other
middleware).

AgentGym's webshop server is the one that names things its own way: the session is
``env_idx`` (in bodies and query strings), a reset's item is ``session_id``, ``/create``
answers a bare id and ``/reset`` answers ``[observation, null]``. Requests are renamed to
the common names (``id``, ``data_idx``) before the routes see them, and those two answers
reshaped after; everything else (``state``, ``info``) is the wire format's own fields.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlencode

from agentcli.envs.wire.format import WireFormat


class RenamedWire:
    def __init__(self, app: Any, wire: WireFormat) -> None:
        self.app = app
        self.names = {wire.id_field: "id", wire.index_field: "data_idx"}
        self.observation_field = wire.observation_field

    def _renamed(self, fields: dict[str, Any]) -> dict[str, Any]:
        return {self.names.get(key, key): value for key, value in fields.items()}

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        query = dict(parse_qsl(scope.get("query_string", b"").decode()))
        scope = dict(scope, query_string=urlencode(self._renamed(query)).encode())
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            more = message.get("more_body", False)
        # JSON: the server's request limits (outside this) refused a body that is not
        parsed = json.loads(body) if body else None
        if isinstance(parsed, dict):
            body = json.dumps(self._renamed(parsed)).encode()
            headers = [(k, v) for k, v in scope["headers"] if k != b"content-length"]
            scope["headers"] = [*headers, (b"content-length", str(len(body)).encode())]

        reshape = {"/create": self._bare_id, "/reset": self._observation_pair}.get(scope["path"])
        sending = send if reshape is None else _Reshaping(send, reshape)
        await self.app(scope, replaying(body, receive), sending)

    @staticmethod
    def _bare_id(body: Any) -> Any:
        return body["id"]

    def _observation_pair(self, body: Any) -> Any:
        return [body[self.observation_field], None]


class _Reshaping:
    """Sends a successful JSON answer as ``reshape`` turns it, with its length fixed."""

    def __init__(self, send: Any, reshape: Any) -> None:
        self.send = send
        self.reshape = reshape
        self.start: dict | None = None
        self.body = b""

    async def __call__(self, message: dict) -> None:
        if message["type"] == "http.response.start":
            if message["status"] != 200:
                self.reshape = None
                return await self.send(message)
            self.start = message
            return None
        if self.reshape is None:
            return await self.send(message)
        self.body += message.get("body", b"")
        if message.get("more_body", False):
            return None
        body = json.dumps(self.reshape(json.loads(self.body))).encode()
        headers = [(k, v) for k, v in self.start["headers"] if k != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await self.send({**self.start, "headers": headers})
        await self.send({"type": "http.response.body", "body": body})


def replaying(body: bytes, receive: Any) -> Any:
    """An ASGI ``receive`` that gives ``body`` (already read off the wire) as the whole request,
    then hands over to ``receive`` (for the disconnect)."""
    replayed = False

    async def replay() -> dict:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
