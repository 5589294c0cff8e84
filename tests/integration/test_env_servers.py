"""Every built-in environment over real HTTP: the expert succeeds, bad input gets a 4xx,
sessions do not leak, and the same item gives the same text in two server processes."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import httpx
import pytest

from agentcli.envs.registry import SPECS
from agentcli.envs.wire.client import EnvClient
from tests.support.servers import (
    child_commands,
    expert_episodes,
    running_server,
    running_server_process,
)


@dataclass(frozen=True)
class Case:
    env: str
    expert_items: tuple[int, ...]
    same_text_items: tuple[int, ...]
    marks: tuple[pytest.MarkDecorator, ...] = ()
    finite: bool = True  # textcraft ids wrap and babyai seeds never run out, as in AgentGym
    style: str | None = None  # what our client asks /create for (None: AgentGym's wording)


ALFWORLD_SHIPPED_GAMES = (10000, 10001, 10002)  # served without ALFWorld's data directory
# Seed 0 of the 20 BabyAI levels whose expert finishes within AgentGym's 20 rounds.
BABYAI_ITEMS = (0, 1, 2, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14, 18, 19, 20, 21, 22, 24, 25)
# Five task types whose gold paths fit sciworld's 30 rounds.
SCIWORLD_TASK_TYPES = (1396, 3236, 4168, 4240, 4629)
CASES = [
    Case("textcraft", tuple(range(20)), tuple(range(20)), finite=False),
    # our wording: AgentGym's has no way to open the box of item 25 (KeyInBox)
    Case("babyai", BABYAI_ITEMS, tuple(range(20)), finite=False, style="native"),
    Case("alfworld", ALFWORLD_SHIPPED_GAMES, ALFWORLD_SHIPPED_GAMES, (pytest.mark.alfworld,)),
    Case("sciworld", SCIWORLD_TASK_TYPES, tuple(range(3)), (pytest.mark.java, pytest.mark.slow)),
]
PARAMS = [pytest.param(case, id=case.env, marks=case.marks) for case in CASES if case.env in SPECS]


def _skip_unless_runnable(env: str) -> None:
    reason = SPECS[env].missing()
    if reason:
        pytest.skip(f"{env} cannot run here: {reason}")


@pytest.mark.parametrize("case", PARAMS)
def test_expert_succeeds_over_http_and_sessions_end_closed(case: Case):
    _skip_unless_runnable(case.env)
    with running_server(case.env) as url:
        items = list(case.expert_items)
        results = asyncio.run(expert_episodes(url, case.env, items, case.style))
        assert all(results.values()), {i: ok for i, ok in results.items() if not ok}
        assert httpx.get(f"{url}/health").json()["sessions"] == 0


def test_babyai_words_each_session_as_its_create_asks():
    """A create without a style (AgentGym's client sends none) gets AgentGym's server's words
    and actions; ``{"style": "native"}`` ours. The expert plays either."""
    _skip_unless_runnable("babyai")
    with running_server("babyai") as url, httpx.Client(base_url=url, timeout=60) as http:
        first = {}
        for style, body in (("agentgym", {}), ("native", {"style": "native"})):
            session = http.post("/create", json=body).json()["id"]
            reset = http.post("/reset", json={"id": session, "data_idx": 0}).json()
            first[style] = reset["observation"]
            http.post("/close", json={"id": session})
        assert "In front of you in this room, you can see several objects: " in first["agentgym"]
        assert '"pickup red ball 1"' in first["agentgym"]
        assert "In front of you in this room" not in first["native"]
        items = [index for index in BABYAI_ITEMS if index != 25]
        results = asyncio.run(expert_episodes(url, "babyai", items, "agentgym"))
        assert all(results.values()), {i: ok for i, ok in results.items() if not ok}


@pytest.mark.parametrize("case", PARAMS)
def test_bad_inputs_get_4xx_and_the_server_keeps_serving(case: Case):
    _skip_unless_runnable(case.env)
    wire_reset = "game" if case.env == "alfworld" else "data_idx"
    with running_server(case.env) as url, httpx.Client(base_url=url, timeout=60) as http:
        session = http.post("/create", json={}).json()["id"]
        if case.env != "textcraft":  # textcraft's /create resets, as AgentGym's does
            early = http.post("/step", json={"id": session, "action": "look"})
            assert early.status_code == 409, early.text
        if case.finite:
            beyond = http.post("/reset", json={"id": session, wire_reset: 10**9})
            assert beyond.status_code == 422 and "error" in beyond.json(), beyond.text
        assert http.post("/reset", json={"id": session, wire_reset: -1}).status_code == 422
        assert http.post("/step", json={"id": 424242, "action": "look"}).status_code == 404
        assert http.post("/step", json={"nope": 1}).status_code == 422
        first = case.same_text_items[0]
        http.post("/reset", json={"id": session, wire_reset: first}).raise_for_status()
        odd = http.post("/step", json={"id": session, "action": "}{ not an action ]["})
        assert odd.status_code == 200, odd.text
        http.post("/close", json={"id": session}).raise_for_status()
        assert http.get("/health").json() == {
            "status": "healthy",
            "env": case.env,
            "sessions": 0,
            "max_sessions": 256,
        }


def _observations(url: str, env: str, items: tuple[int, ...]) -> list[str]:
    async def collect() -> list[str]:
        async with EnvClient(url, env) as client:
            session = await client.open()
            texts = [(await session.reset(index)).observation for index in items]
            await session.close()
            return texts

    return asyncio.run(collect())


@pytest.mark.parametrize("case", PARAMS)
def test_same_item_same_text_across_server_processes(case: Case):
    _skip_unless_runnable(case.env)
    texts = []
    for hash_seed in ("1", "2"):
        with running_server(case.env, hash_seed=hash_seed) as url:
            texts.append(_observations(url, case.env, case.same_text_items))
    assert texts[0] == texts[1]
    assert all(text.strip() for text in texts[0])


@pytest.mark.java
@pytest.mark.slow
def test_sciworld_sessions_end_their_jvms_when_closed_or_reaped():
    _skip_unless_runnable("sciworld")
    # Long enough that the first abandoned session outlives starting the second's JVM on a
    # loaded machine (seconds each), short enough to wait for.
    with running_server_process("sciworld", "--idle-timeout", "10") as (url, process):
        with httpx.Client(base_url=url, timeout=120) as http:
            for cycle in range(6):
                session = http.post("/create", json={}).json()["id"]
                http.post("/reset", json={"id": session, "data_idx": cycle}).raise_for_status()
                http.post("/step", json={"id": session, "action": "look around"})
                http.post("/close", json={"id": session}).raise_for_status()
            abandoned = [http.post("/create", json={}).json()["id"] for _ in range(2)]
            assert child_commands(process.pid).count("java") == 2
            deadline = time.monotonic() + 45
            while http.get("/health").json()["sessions"] and time.monotonic() < deadline:
                time.sleep(0.2)
            assert http.get("/health").json()["sessions"] == 0, abandoned
        deadline = time.monotonic() + 10
        while "java" in child_commands(process.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert "java" not in child_commands(process.pid)
