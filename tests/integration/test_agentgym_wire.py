"""Wire compatibility with AgentGym, both ways, over real HTTP.

Our servers driven by a client that speaks AgentGym's wire as its env clients do
(tests/support/agentgym_client.py), and our client driving servers that behave like
AgentGym's (tests/support/agentgym_style_server.py: errors as HTTP 200 + ``error``, no
/tasks, no /expert, and on webshop no /close).
"""

from __future__ import annotations

import asyncio
import logging
import time

import httpx
import pytest

from agentcli.data.jsonl import read_records
from agentcli.envs.registry import SPECS
from agentcli.envs.wire.client import EnvClient
from agentcli.errors import EnvServerError, NoExpertError
from agentcli.records import Episode
from tests.support.agentgym_client import AgentGymClientError, AgentGymStyleClient
from tests.support.agentgym_style_server import agentgym_style_server
from tests.support.cli import agentgym
from tests.support.client_only import NAME, agentgym_with_client_only_env
from tests.support.openai_server import openai_server
from tests.support.servers import child_commands, running_server, running_server_process

BIRCH_PLANKS = 3  # textcraft item 3: craft birch planks from birch logs
ALFWORLD_GAME = 10000  # a shipped game, served without ALFWorld's data directory


def _skip_unless_runnable(env: str) -> None:
    reason = SPECS[env].missing()
    if reason:
        pytest.skip(f"{env} cannot run here: {reason}")


def _sessions(url: str) -> int:
    return httpx.get(f"{url}/health").json()["sessions"]


@pytest.fixture(scope="module")
def textcraft_url():
    with running_server("textcraft", "--max-sessions", "8") as url:
        yield url


# --- our servers, AgentGym's clients -------------------------------------------------------


def test_agentgym_textcraft_client_plays_an_item_and_reads_its_detail(textcraft_url):
    client = AgentGymStyleClient(textcraft_url, "textcraft")
    assert client.created["observation"].startswith("Crafting commands:")
    client.reset(BIRCH_PLANKS)
    client.step("get 1 birch logs")
    step = client.step("craft 4 birch planks using 1 birch logs")
    assert (step["reward"], step["done"]) == (1.0, True)
    # AgentGym's textcraft server keeps these four fields per session, updated by each step.
    assert client.get("/detail") == {
        "observation": step["observation"], "done": True, "reward": 1.0, "deleted": False,
    }  # fmt: skip
    assert client.get("/observation") == step["observation"]
    client.close()
    assert _sessions(textcraft_url) == 0


def test_textcraft_create_with_commands_and_goal_plays_that_task(textcraft_url):
    commands = "craft 4 birch planks using 1 birch logs\ncraft 1 stick using 2 planks"
    client = AgentGymStyleClient(
        textcraft_url, "textcraft", commands=commands, goal="minecraft:birch_planks"
    )
    # Shown as given (AgentGym's own server ignores them and plays item `id` instead).
    assert client.created["observation"] == (
        f"Crafting commands:\n{commands}\n\nGoal: craft birch planks."
    )
    assert client.get("/expert") == {"action": "get 1 birch logs"}
    client.step("get 1 birch logs")
    step = client.step("craft 4 birch planks using 1 birch logs")
    assert (step["reward"], step["done"]) == (1.0, True)
    # A reset plays an item again, as on AgentGym's server.
    assert client.reset(12)["observation"] != client.created["observation"]
    client.close()


def test_a_custom_task_with_an_unknown_goal_is_refused_and_holds_no_session(textcraft_url):
    with pytest.raises(AgentGymClientError, match="422.*no item 'unobtainium'"):
        AgentGymStyleClient(textcraft_url, "textcraft", commands="craft it", goal="unobtainium")
    with pytest.raises(AgentGymClientError, match="422.*both commands and goal"):
        AgentGymStyleClient(textcraft_url, "textcraft", goal="minecraft:stick")
    assert _sessions(textcraft_url) == 0


def test_our_errors_fail_an_agentgym_client_as_theirs_do_and_say_why(textcraft_url):
    # AgentGym's clients take only HTTP 200 (`assert res.status_code == 200`): an error of
    # ours stops them as any failure does, and the body says what is wrong.
    client = AgentGymStyleClient(textcraft_url, "textcraft")
    session, client.id = client.id, 10_000
    with pytest.raises(AgentGymClientError, match='404.*"error":"no live session with id'):
        client.step("inventory")
    client.id = session
    client.close()


def test_agentgym_babyai_client_plays_and_babyai_has_no_detail():
    with running_server("babyai") as url:
        client = AgentGymStyleClient(url, "babyai")
        reset = client.reset(0)
        # AgentGym's babyai reset answer, field for field (and our success, which it ignores)
        assert set(reset) == {"observation", "reward", "score", "deleted", "done", "success"}
        client.step("turn left")
        with pytest.raises(AgentGymClientError, match="404"):  # AgentGym's babyai has none
            client.get("/detail")
        client.close()
        assert _sessions(url) == 0


@pytest.mark.alfworld
def test_agentgym_alfworld_client_reads_available_actions_and_detail():
    _skip_unless_runnable("alfworld")
    with running_server("alfworld") as url:
        client = AgentGymStyleClient(url, "alfworld")
        assert client.get("/detail") == {"done": False, "reward": 0, "deleted": False}
        reset = client.reset(ALFWORLD_GAME)
        assert client.get("/available_actions") == reset["available_actions"]
        assert client.get("/detail") == {
            "world_type": "Text", "game": ALFWORLD_GAME, "observation": reset["observation"],
            "available_actions": reset["available_actions"], "done": False, "reward": 0.0,
            "deleted": False,
        }  # fmt: skip
        step = client.step("look")
        detail = client.get("/detail")
        assert detail["observation"] == step["observation"]
        assert client.get("/available_actions") == step["available_actions"]
        client.close()  # AgentGym's alfworld server has no /close; its client posts one anyway
        assert _sessions(url) == 0


@pytest.mark.java
@pytest.mark.slow
def test_agentgym_sciworld_client_reads_detail_and_closing_ends_the_jvm():
    _skip_unless_runnable("sciworld")
    with running_server_process("sciworld") as (url, process):
        client = AgentGymStyleClient(url, "sciworld")
        assert client.get("/detail") == {"deleted": False, "done": False}
        reset = client.reset(0)
        assert set(reset) - {"success"} == set(client.get("/detail"))  # AgentGym's reset fields
        assert set(client.get("/detail")) == {
            "task_name", "var_num", "task_description", "observation", "reward", "score",
            "deleted", "done",
        }  # fmt: skip
        assert client.get("/detail")["task_description"] == reset["task_description"]
        step = client.step("look around")
        assert client.get("/detail")["observation"] == step["observation"]
        client.close()
        assert _sessions(url) == 0
        _wait_until(lambda: "java" not in child_commands(process.pid))


# --- our client, servers that behave like AgentGym's ---------------------------------------


def test_collect_on_a_server_without_expert_exits_in_one_line_leaving_its_sessions(tmp_path):
    with agentgym_style_server() as server:
        httpx.post(f"{server.url}/create", json={}).raise_for_status()  # another client's
        before = len(server.sessions)
        result = agentgym("collect", "--env", "textcraft", "--env-server", server.url,
                          "--limit", "4", "--out", str(tmp_path / "demos.jsonl"))  # fmt: skip
        assert len(server.sessions) == before == 1
        assert server.requests.count("POST /create") == 1  # the other client's only
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().count("\n") == 0
    assert "the oracle needs a built-in server; start one with `agentgym env serve textcraft`" in (
        result.stderr
    )
    assert not (tmp_path / "demos.jsonl").exists()


def test_an_expert_asked_of_a_server_without_one_ends_the_episode_and_recreates_nothing():
    async def scenario(url: str) -> None:
        async with EnvClient(url, "textcraft") as client:
            session = await client.open()
            await session.reset(BIRCH_PLANKS)
            try:
                with pytest.raises(NoExpertError, match="has no /expert"):
                    await session.expert_action()
            finally:
                await session.close()

    with agentgym_style_server() as server:
        asyncio.run(scenario(server.url))
        assert server.requests.count("POST /create") == 1
        assert server.sessions == {}


@pytest.mark.parametrize(
    ("command", "items"),
    [("rollout", [1, 2, 3]), ("eval", [0, 5, 10])],  # textcraft's train and test splits here
)
def test_without_data_a_server_without_tasks_plays_the_envs_own_split(command, items, tmp_path):
    with openai_server(_inventory_turn) as model, agentgym_style_server() as server:
        result = agentgym(command, "--env", "textcraft", "--env-server", server.url,
                          "--base-url", model.url, "--model-name", "m", "--limit", "3",
                          "--max-rounds", "2", "--out", str(tmp_path / "run"))  # fmt: skip
        assert server.sessions == {}  # every session closed again
    assert result.returncode == 0, result.stderr
    episodes = list(read_records(tmp_path / "run" / "episodes.jsonl", Episode))
    assert {episode.item_id for episode in episodes} == {f"textcraft_{i}" for i in items}
    assert len(episodes) == len(items)
    assert all("error" not in episode.meta for episode in episodes)


def test_a_server_without_tasks_of_an_env_not_known_here_asks_for_data(tmp_path):
    with agentgym_style_server("webshop") as server:
        result = agentgym_with_client_only_env(
            "rollout", "--env", NAME, "--env-server", server.url, "--base-url",
            "http://127.0.0.1:9/v1", "--model-name", "m", "--out", str(tmp_path / "e.jsonl"),
        )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().count("\n") == 0
    assert "lists no tasks (no /tasks)" in result.stderr and "pass --data FILE" in result.stderr


def test_webshop_style_server_busy_503s_are_retried_and_a_missing_close_is_said_once(caplog):
    async def scenario(url: str) -> str:
        async with EnvClient(url, "webshop", backoff_s=0.01) as client:
            first, second = await client.open(), await client.open()
            await first.reset(BIRCH_PLANKS)
            observation = (await first.step("get 1 birch logs")).observation
            await first.close()
            await second.close()
            return observation

    with agentgym_style_server("webshop", busy_503s=2) as server:
        with caplog.at_level(logging.WARNING, logger="agentgym.client"):
            observation = asyncio.run(scenario(server.url))
        assert observation == "Got 1 birch logs"
        assert server.requests.count("POST /step") == 3  # two 503s, then the step
        assert server.requests.count("POST /close") == 1  # asked once: it has none
        assert len(server.sessions) == 2  # AgentGym's webshop never frees them
    assert caplog.text.count("has no /close") == 1


def test_a_503_without_retry_after_elsewhere_is_a_failure_at_once():
    async def scenario(url: str) -> None:
        async with EnvClient(url, "textcraft", backoff_s=0.01) as client:
            session = await client.open()
            await session.reset(BIRCH_PLANKS)
            try:
                with pytest.raises(EnvServerError, match=r"POST /step failed \(503\)"):
                    await session.step("inventory")
            finally:
                await session.close()

    with agentgym_style_server(busy_503s=1) as server:
        asyncio.run(scenario(server.url))
        assert server.requests.count("POST /step") == 1


def test_env_check_passes_a_webshop_style_server_and_says_it_keeps_its_sessions():
    with agentgym_style_server("webshop") as server:
        result = agentgym("env", "check", server.url, "--env", "webshop", "--steps", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verdict: PASS" in result.stdout
    assert "no /close here" in result.stdout


def test_a_create_cancelled_in_flight_closes_the_session_the_server_opened():
    async def scenario(url: str) -> None:
        async with EnvClient(url, "textcraft") as client:
            opening = asyncio.create_task(client.open())
            await asyncio.sleep(0.2)  # the server is still opening it
            opening.cancel()
            with pytest.raises(asyncio.CancelledError):
                await opening

    with agentgym_style_server(create_s=1.0) as server:
        asyncio.run(scenario(server.url))
        assert server.requests == ["POST /create", "POST /close"]
        assert server.sessions == {}


# --- re-creating a lost session leaks nothing ------------------------------------------------


@pytest.mark.parametrize(
    "env", ["textcraft", pytest.param("sciworld", marks=(pytest.mark.java, pytest.mark.slow))]
)
def test_a_session_reaped_mid_episode_is_recreated_without_a_leak(env, caplog):
    _skip_unless_runnable(env)
    action = {"textcraft": "inventory", "sciworld": "look around"}[env]

    async def scenario(url: str, pid: int) -> tuple[int, int]:
        async with EnvClient(url, env) as client:
            session = await client.open()
            await session.reset(0)
            await session.step(action)
            await asyncio.sleep(2.0)  # past --idle-timeout: the server closes the session
            await session.step(action)  # the client re-creates it and replays
            live = _sessions(url)
            # one simulator: the reaped session's JVM ended, only the new one runs
            _wait_until(lambda: child_commands(pid).count("java") == (env == "sciworld"))
            await session.close()
            return live, _sessions(url)

    with running_server_process(env, "--idle-timeout", "1") as (url, process):
        with caplog.at_level(logging.WARNING, logger="agentgym.client"):
            live, after = asyncio.run(scenario(url, process.pid))
        assert "re-creating it at item 0 and replaying 1 actions" in caplog.text
        assert (live, after) == (1, 0)
        _wait_until(lambda: "java" not in child_commands(process.pid))


def _inventory_turn(messages: list[dict[str, str]]) -> str:
    return "Thought: I look at what I hold.\nAction: inventory"


def _wait_until(condition, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
