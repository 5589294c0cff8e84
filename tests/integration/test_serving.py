"""Every server agentgym starts closes a connection that has not sent a request's head in time
and refuses connections past its bound (``agentcli.serving``), on both of uvicorn's HTTP
implementations; env servers and the viewer are run through it, each then answering as before."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI, WebSocket
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from websockets.sync.client import connect

from agentcli.common import free_port
from agentcli.data.jsonl import write_records
from agentcli.envs.wire.launcher import server_process
from agentcli.serving import bounded_http
from tests.support.view_records import episode
from tests.support.view_server import running_view

HEAD_TIMEOUT_S = 1.0
MAX_CONNECTIONS = 3


def _app() -> FastAPI:
    app = FastAPI()

    @app.get("/")
    async def hello() -> dict[str, bool]:
        return {"ok": True}

    @app.get("/slow")
    async def slow() -> dict[str, bool]:
        await asyncio.sleep(2 * HEAD_TIMEOUT_S)  # answering takes longer than a head may
        return {"ok": True}

    @app.websocket("/ws")
    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        while True:
            await websocket.send_text(await websocket.receive_text())

    return app


@pytest.fixture(scope="module", params=[H11Protocol, HttpToolsProtocol], ids=["h11", "httptools"])
def url(request) -> Iterator[str]:
    import uvicorn

    port = free_port()
    http = bounded_http(HEAD_TIMEOUT_S, MAX_CONNECTIONS, base=request.param)
    config = uvicorn.Config(_app(), port=port, http=http, log_level="warning",
                            timeout_graceful_shutdown=1)  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def seconds_until_closed(port: int, *sends: bytes, limit_s: float = 60) -> tuple[float, bytes]:
    """Open a connection, send ``sends``, and read until the server closes it: how long after
    the last send, and what it answered."""
    with socket.create_connection(("127.0.0.1", port), timeout=limit_s) as connection:
        for data in sends:
            connection.sendall(data)
        sent = time.monotonic()
        answer = b""
        while chunk := connection.recv(4096):
            answer += chunk
        return time.monotonic() - sent, answer


def _answers(url: str) -> None:
    with httpx.Client(timeout=10) as client:
        assert client.get(url).status_code == 200


def test_half_a_request_line_is_closed_within_the_bound_and_the_server_answers_after(url):
    waited, answer = seconds_until_closed(_port(url), b"GET / HT")
    assert answer == b"" and HEAD_TIMEOUT_S * 0.9 <= waited < HEAD_TIMEOUT_S + 3
    _answers(url)


def test_the_bound_counts_again_after_each_answer(url):
    whole = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    waited, answer = seconds_until_closed(_port(url), whole, b"GET / HTTP/1.1\r\nHo")
    assert answer.startswith(b"HTTP/1.1 200") and waited < HEAD_TIMEOUT_S + 3


def test_a_head_sent_in_parts_within_the_bound_and_a_long_answer_are_not_cut(url):
    with socket.create_connection(("127.0.0.1", _port(url)), timeout=30) as connection:
        connection.sendall(b"GET /slow HTTP/1.1\r\n")
        time.sleep(HEAD_TIMEOUT_S / 2)
        connection.sendall(b"Host: x\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := connection.recv(4096):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b'{"ok":true}')


def test_a_websocket_outlives_the_head_bound(url):
    with connect(f"{url.replace('http', 'ws')}/ws") as websocket:
        time.sleep(HEAD_TIMEOUT_S * 2)
        websocket.send("still here")
        assert websocket.recv(timeout=10) == "still here"


def test_a_connection_past_the_bound_is_answered_503_and_closed(url):
    port = _port(url)
    held = [socket.create_connection(("127.0.0.1", port)) for _ in range(MAX_CONNECTIONS)]
    try:
        time.sleep(0.2)  # the server accepts them
        waited, answer = seconds_until_closed(port)
        assert answer.startswith(b"HTTP/1.1 503") and waited < HEAD_TIMEOUT_S / 2
        error = json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]
        assert error == "this server holds 3 connections at most: retry later"
    finally:
        for connection in held:
            connection.close()
    time.sleep(0.2)
    _answers(url)


@contextmanager
def _env_server(environ: dict[str, str]) -> Iterator[str]:
    with server_process("textcraft", port=free_port(), environ=environ) as (url, _):
        yield url


def test_an_env_server_closes_a_half_sent_head_after_its_read_timeout():
    with _env_server({"AGENTGYM_READ_TIMEOUT_S": "1", "AGENTGYM_MAX_CONNECTIONS": "2"}) as url:
        waited, answer = seconds_until_closed(_port(url), b"POST /create HTT")
        assert answer == b"" and 0.9 <= waited < 4
        held = [socket.create_connection(("127.0.0.1", _port(url))) for _ in range(2)]
        time.sleep(0.2)
        _, answer = seconds_until_closed(_port(url))
        assert answer.startswith(b"HTTP/1.1 503")
        for connection in held:
            connection.close()
        time.sleep(0.2)
        assert httpx.post(f"{url}/create").status_code == 200


@pytest.mark.slow
def test_the_viewer_closes_a_half_sent_head_after_ten_seconds(tmp_path: Path):
    episodes = tmp_path / "episodes.jsonl"
    write_records(episodes, [episode(0)])
    with running_view(episodes) as view:
        waited, answer = seconds_until_closed(_port(view.url), b"GET /api/overview HTTP/1.1\r\n")
        assert answer == b"" and 9 <= waited < 14
        assert httpx.get(f"{view.url}api/overview").status_code == 200
