"""A built-in server bounds what a request can cost and says so in its OpenAPI schema: a body
over the size limit gets 413, one that stalls gets 408, ids are strict, every route checks
item indices alike."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from agentcli.common import free_port
from agentcli.envs.registry import get_spec
from agentcli.envs.wire.server import ServeConfig, create_app
from tests.support.servers import app_in_thread


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    settings = ServeConfig(env="textcraft", max_body_bytes=4096, read_timeout_s=1.0)
    port = free_port()
    with app_in_thread(create_app(get_spec("textcraft"), settings=settings), port) as url:
        yield url, port


def test_a_body_over_the_limit_gets_413_before_it_is_read(server):
    url, _ = server
    response = httpx.post(f"{url}/step", content=b'{"id": 0, "action": "' + b"x" * 8000 + b'"}',
                          headers={"content-type": "application/json"})  # fmt: skip
    assert response.status_code == 413 and "over 4096 bytes" in response.json()["error"]
    assert response.headers.get("x-agentgym-boot")  # the middleware stamps errors too


def test_a_stalled_body_gets_408_after_the_read_timeout(server):
    _, port = server
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(b"POST /step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                           b"Content-Length: 100\r\n\r\n{\"id\": 0")  # fmt: skip
        started = time.monotonic()
        answer = b""
        while b"did not arrive" not in answer and (chunk := connection.recv(4096)):
            answer += chunk  # the head and the body may come in separate segments
    assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 1 s" in answer
    assert time.monotonic() - started < 8


def test_ids_are_strict_and_indices_checked_on_every_route(server):
    url, _ = server
    session = httpx.post(f"{url}/create").json()["id"]
    assert httpx.post(f"{url}/step", json={"id": False, "action": "look"}).status_code == 422
    assert httpx.post(f"{url}/reset", json={"id": session, "data_idx": -1}).status_code == 422
    assert httpx.get(f"{url}/privileged", params={"data_idx": -1}).status_code == 422
    assert httpx.get(f"{url}/privileged", params={"data_idx": 3}).status_code == 200
    httpx.post(f"{url}/close", json={"id": session})


def test_the_schema_lists_every_error_status_with_its_body(server):
    url, _ = server
    schema = httpx.get(f"{url}/openapi.json").json()
    step = schema["paths"]["/step"]["post"]["responses"]
    assert {"400", "404", "408", "409", "413", "422", "500", "503"} <= set(step)
    assert step["409"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody")
