"""The server's contract, over real HTTP against a real textcraft server process."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from agentcli.envs.wire.client import EnvClient
from agentcli.envs.wire.format import MAX_ACTION_CHARS
from tests.support.servers import running_server


@pytest.fixture(scope="module")
def url():
    with running_server("textcraft", "--max-sessions", "8") as base:
        yield base


@pytest.fixture
def http(url):
    with httpx.Client(base_url=url, timeout=30) as client:
        yield client


def _created(http: httpx.Client) -> int:
    response = http.post("/create", json={})
    assert response.status_code == 200
    return response.json()["id"]


def _assert_error(response: httpx.Response, status: int, words: str) -> None:
    assert response.status_code == status, response.text
    assert words in response.json()["error"]


def test_bad_inputs_get_clear_4xx_and_server_keeps_serving(http):
    session = _created(http)
    try:
        _assert_error(
            http.post("/step", json={"id": 10_000, "action": "inventory"}), 404, "no live"
        )
        _assert_error(http.post("/reset", json={"id": session, "data_idx": -1}), 422, "data_idx")
        _assert_error(http.post("/step", json={"id": session}), 422, "action")
        _assert_error(
            http.post("/step", content=b"{not json", headers={"content-type": "application/json"}),
            422,
            "not valid JSON",
        )
        too_long = "get 1 " + "x" * MAX_ACTION_CHARS
        _assert_error(http.post("/step", json={"id": session, "action": too_long}), 422, "action")
        _assert_error(http.get("/observation", params={"id": "abc"}), 422, "id")
        _assert_error(http.post("/create", json={"goal": "minecraft:stick"}), 422, "both commands")
        _assert_error(http.get("/tasks", params={"split": "nope"}), 404, "no split")
        _assert_error(http.get("/privileged"), 422, "exactly one")

        # Step after done: finish item 3 (birch planks) with the expert, then step again.
        http.post("/reset", json={"id": session, "data_idx": 3}).raise_for_status()
        done = False
        while not done:
            action = http.get("/expert", params={"id": session}).json()["action"]
            done = http.post("/step", json={"id": session, "action": action}).json()["done"]
        _assert_error(http.post("/step", json={"id": session, "action": "inventory"}), 409, "over")
        # A nonsense action is an observation, not an error.
        http.post("/reset", json={"id": session, "data_idx": 3}).raise_for_status()
        reply = http.post("/step", json={"id": session, "action": "🙂 dance"})
        assert reply.status_code == 200 and reply.json()["done"] is False
    finally:
        http.post("/close", json={"id": session})
    assert http.get("/health").json()["status"] == "healthy"


# Bodies that are not JSON a route can read, each as an attacker or a broken client sends it.
MALFORMED_BODIES = [
    b"{not json",
    b"\xff\xfe",  # not UTF-8
    b"[" * 100_000,  # json gives up with RecursionError, not ValueError
    b'{"id": ' * 100_000,
    # deep enough to pass one parser and fail the next, whose stack is deeper
    b'{"id": 0, "action": ' + b"[" * 970 + b"]" * 970 + b"}",
    b"[" * 101 + b"]" * 101,  # valid JSON, nested past any request's shape
]


@pytest.mark.parametrize("env", ["textcraft", "webshop"])  # webshop's wire renames its bodies
def test_every_malformed_body_gets_the_422_of_a_bad_body_and_the_server_keeps_serving(env):
    with running_server(env) as base, httpx.Client(base_url=base, timeout=30) as client:
        for body in MALFORMED_BODIES:
            for path in ("/create", "/reset", "/step"):
                response = client.post(
                    path, content=body, headers={"content-type": "application/json"}
                )
                assert response.status_code == 422, (path, body[:30], response.text)
                assert response.json()["error"].startswith("malformed request: "), response.text
        created = client.post("/create")
        assert created.status_code == 200  # and on the same connection
        assert client.get("/health").json()["sessions"] == 1


def test_closed_session_is_gone(http):
    session = _created(http)
    http.post("/close", json={"id": session}).raise_for_status()
    _assert_error(http.post("/close", json={"id": session}), 404, "no live")


def test_session_limit_gives_503_and_frees_on_close(http):
    sessions = [_created(http) for _ in range(8)]
    try:
        _assert_error(http.post("/create", json={}), 503, "--max-sessions")
    finally:
        for session in sessions:
            http.post("/close", json={"id": session}).raise_for_status()
    assert http.get("/health").json()["sessions"] == 0


def test_create_close_cycles_leave_no_sessions(http):
    for _ in range(200):
        http.post("/close", json={"id": _created(http)}).raise_for_status()
    assert http.get("/health").json()["sessions"] == 0


def test_idle_sessions_are_reaped():
    with running_server("textcraft", "--idle-timeout", "0.5") as base:
        session = httpx.post(f"{base}/create", json={}).json()["id"]
        assert httpx.get(f"{base}/health").json()["sessions"] == 1
        for _ in range(50):
            if httpx.get(f"{base}/health").json()["sessions"] == 0:
                break
            time.sleep(0.1)
        assert httpx.get(f"{base}/health").json()["sessions"] == 0
        reply = httpx.post(f"{base}/step", json={"id": session, "action": "inventory"})
        assert reply.status_code == 404


def test_wire_fields_match_agentgym_textcraft(http):
    # The exact calls AgentGym's textcraft client makes.
    created = http.post(
        "/create", json={"minecraft_dir": "agentenv_textcraft/", "commands": None, "goal": None}
    )
    body = created.json()
    assert {"id", "observation", "done", "reward"} <= set(body)
    session = body["id"]
    reset = http.post("/reset", json={"id": session, "data_idx": 12}).json()
    assert {"id", "observation", "done", "reward"} <= set(reset)
    assert reset["observation"].startswith("Crafting commands:")
    step = http.post("/step", json={"id": session, "action": "inventory"}).json()
    assert {"observation", "reward", "done"} <= set(step)
    assert http.get("/observation", params={"id": session}).json() == step["observation"]
    http.post("/close", json={"id": session}).raise_for_status()


async def _concurrent_episodes(url: str, n: int) -> list[bool]:
    async with EnvClient(url, "textcraft") as client:

        async def episode(index: int) -> bool:
            session = await client.open()
            transition = await session.reset(index)
            while not transition.done:
                transition = await session.step(await session.expert_action())
            await session.close()
            return transition.success

        return await asyncio.gather(*(episode(i) for i in range(n)))


def test_concurrent_clients_each_get_their_own_episode(url):
    assert all(asyncio.run(_concurrent_episodes(url, 8)))
