"""Our env servers speak OpenEnv's protocol: OpenEnv's own client (openenv 0.10's
``GenericEnvClient``, installed by ``make install``) plays built-in envs over ``/ws`` and sees
what our AgentGym-wire client sees; bad messages get the answers OpenEnv's own server gives;
each WebSocket holds one session of the server's, released when it ends."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from openenv.cli._validation import validate_running_environment  # `openenv validate --url`
from openenv.core import GenericEnvClient
from openenv.core.env_server import Action, Environment, HTTPEnvServer, Observation, State
from websockets.sync.client import connect

from agentcli.envs.registry import get_spec
from agentcli.envs.wire.client import EnvClient
from agentcli.envs.wire.server import ServeConfig, create_app
from tests.support.servers import app_in_thread, running_server

ITEMS = {"textcraft": [3, 40], "babyai-putnext": [0, 7]}


@pytest.fixture(scope="module", params=sorted(ITEMS))
def server(request) -> Iterator[tuple[str, str]]:
    with running_server(request.param) as url:
        yield request.param, url


def _sessions(url: str) -> int:
    return httpx.get(f"{url}/health").json()["sessions"]


async def _play_both_wires(url: str, env: str, index: int) -> dict[str, Any]:
    """Item ``index`` over both wires in lockstep, with the oracle's actions (asked of the
    AgentGym-wire session): every observation, reward and done must agree."""
    async with EnvClient(url, env) as ours, GenericEnvClient(base_url=url) as theirs:
        session = await ours.open()
        try:
            expected = await session.reset(index)
            result = await theirs.reset(item_id=f"{env}_{index}")
            assert result.observation["text"] == expected.observation
            assert (result.done, result.observation["success"]) == (False, False)
            steps = 0
            while not expected.done:
                action = await session.expert_action()
                expected = await session.step(action)
                result = await theirs.step({"action": action})
                steps += 1
                assert result.observation["text"] == expected.observation
                assert (result.reward, result.done) == (expected.reward, expected.done)
                assert result.observation["score"] == expected.score
            assert result.observation["success"] is expected.success is True
            return {"state": await theirs.state(), "steps": steps, "reward": result.reward}
        finally:
            await session.close()


def test_an_openenv_client_plays_an_item_to_a_win_as_our_client_sees_it(server):
    env, url = server
    index = ITEMS[env][0]
    played = asyncio.run(_play_both_wires(url, env, index))
    assert played["steps"] > 0 and played["reward"] > 0
    state = played["state"]
    assert state["item_id"] == f"{env}_{index}"
    assert (state["step_count"], state["done"], state["success"]) == (played["steps"], True, True)
    assert state["episode_id"]
    assert _sessions(url) == 0  # both wires' sessions released


def test_openenv_validates_the_running_server_but_for_mcp(server):
    """OpenEnv's own runtime check (what `openenv validate --url` runs): health, metadata,
    schema, the simulation routes. We offer no MCP tools, so its /mcp check fails alone."""
    env, url = server
    report = validate_running_environment(url)
    failed = [criterion["id"] for criterion in report["criteria"] if not criterion["passed"]]
    assert failed == ["mcp_endpoint"], report
    assert report["mode"] == "simulation"
    schema = httpx.get(f"{url}/schema").json()
    assert schema["action"]["required"] == ["action"]
    assert httpx.get(f"{url}/metadata").json()["name"] == env


def test_concurrent_openenv_sessions_each_get_their_own_and_release_it(server):
    env, url = server

    async def scenario() -> list[dict[str, Any]]:
        return await asyncio.gather(*(_play_both_wires(url, env, i) for i in ITEMS[env]))

    played = asyncio.run(scenario())
    assert [p["state"]["item_id"] for p in played] == [f"{env}_{i}" for i in ITEMS[env]]
    with (
        connect(url.replace("http", "ws") + "/ws") as first,
        connect(url.replace("http", "ws") + "/ws") as second,
    ):
        for socket in (first, second):
            socket.send(json.dumps({"type": "state"}))
            assert json.loads(socket.recv())["type"] == "state"
        assert _sessions(url) == 2
        first.close()  # gone without a close message: its session goes too
        second.send(json.dumps({"type": "close"}))
    asyncio.run(_until(lambda: _sessions(url) == 0))


async def _until(condition: Any, timeout_s: float = 10.0) -> None:
    for _ in range(int(timeout_s / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")


def test_a_reset_names_an_item_of_this_env(server):
    env, url = server
    with GenericEnvClient(base_url=url).sync() as client:
        for bad, says in [
            ({}, "a reset names its item"),
            ({"item_id": "webshop_3"}, "is not a"),
            ({"item_id": f"{env}_3", "seed": 4}, "name different items"),
            ({"level": "hard"}, "Invalid message"),  # not silently dropped
        ]:
            with pytest.raises(RuntimeError, match=says):
                client.reset(**bad)
        assert client.reset(seed=ITEMS[env][0]).done is False  # the session goes on
        assert client.state()["item_id"] == f"{env}_{ITEMS[env][0]}"


# OpenEnv's own server, on a trivial env: what it answers is what ours must.
class _Text(Action):
    action: str


class _Shown(Observation):
    text: str


class _Echo(Environment):
    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any):
        return _Shown(text="ready")

    def step(self, action: _Text, timeout_s: float | None = None, **kwargs: Any):
        return _Shown(text=action.action)

    @property
    def state(self) -> State:
        return State()


def _openenv_reference_app() -> Any:
    from fastapi import FastAPI

    app = FastAPI()
    HTTPEnvServer(_Echo, _Text, _Shown, max_concurrent_envs=1).register_routes(app)
    return app


BAD_MESSAGES = [
    "{not json",
    json.dumps({"type": "dance"}),
    json.dumps({"type": "step"}),
    json.dumps({"type": "step", "data": {"text": "look"}}),
    json.dumps({"type": "step", "data": {"action": 3}}),
    json.dumps({"type": "state", "data": {}}),
]


def _answers(base: str, query: str = "") -> list[tuple[str, str]]:
    with connect(f"{base.replace('http', 'ws')}/ws{query}") as socket:
        socket.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
        assert json.loads(socket.recv())["type"] == "observation"
        answers = []
        for message in BAD_MESSAGES:
            socket.send(message)
            answer = json.loads(socket.recv())
            answers.append((answer["type"], answer["data"].get("code")))
        socket.send(json.dumps({"type": "state"}))  # still in session
        answers.append((json.loads(socket.recv())["type"], None))
    return answers


def test_malformed_frames_get_openenvs_error_frame_and_the_session_goes_on(server):
    """Frames OpenEnv's own server answers with a traceback or a dropped socket, if at all."""
    env, url = server
    with connect(f"{url.replace('http', 'ws')}/ws", max_size=None) as socket:
        socket.send(json.dumps({"type": "reset", "data": {"seed": ITEMS[env][0]}}))
        assert json.loads(socket.recv())["type"] == "observation"
        for frame, code in [
            (json.dumps({"type": []}), "UNKNOWN_TYPE"),  # unhashable: no key of a dict
            (json.dumps([{"type": "state"}]), "UNKNOWN_TYPE"),
            (b'{"type": "state"}', "INVALID_JSON"),  # a binary frame
            ("[" * 100_000, "INVALID_JSON"),  # json's RecursionError
            (json.dumps({"type": "step", "data": {"action": [[[["look"]]]]}}), "VALIDATION_ERROR"),
        ]:
            socket.send(frame)
            answer = json.loads(socket.recv(timeout=30))
            assert (answer["type"], answer["data"]["code"]) == ("error", code), frame[:40]
            socket.send(json.dumps({"type": "state"}))
            state = json.loads(socket.recv(timeout=30))
            assert state["type"] == "state" and state["data"]["item_id"] == f"{env}_{ITEMS[env][0]}"
    asyncio.run(_until(lambda: _sessions(url) == 0))


def _refusal(base: str, query: str) -> tuple[str, dict[str, Any]]:
    with connect(f"{base.replace('http', 'ws')}/ws{query}") as socket:
        answer = json.loads(socket.recv())  # then the server closes the connection
    return answer["type"], answer["data"]


def test_bad_messages_and_unknown_sessions_are_answered_as_openenv_answers_them():
    ours = create_app(get_spec("textcraft"), settings=ServeConfig(env="textcraft", max_sessions=1))
    with app_in_thread(_openenv_reference_app()) as reference, app_in_thread(ours) as url:
        assert _answers(url) == _answers(reference)
        for base in (url, reference):
            kind, data = _refusal(base, "?session_id=nope")
            assert (kind, data["code"], data["message"]) == (
                "error", "SESSION_ERROR", "Unknown session_id: nope",
            )  # fmt: skip
            with connect(f"{base.replace('http', 'ws')}/ws") as holder:
                holder.send(json.dumps({"type": "state"}))
                holder.recv()
                kind, data = _refusal(base, "")  # one session at most on both
                assert (kind, data["code"]) == ("error", "CAPACITY_REACHED")
                assert (data["active_sessions"], data["max_sessions"]) == (1, 1)


def test_a_websocket_attaches_to_a_session_made_over_agentgyms_wire(server):
    env, url = server

    async def scenario() -> None:
        async with EnvClient(url, env) as ours:
            session = await ours.open()
            expected = await session.reset(ITEMS[env][1])
            ws = f"{url.replace('http', 'ws')}/ws?session_id={session.id}"
            with connect(ws) as attached:
                attached.send(json.dumps({"type": "state"}))
                state = json.loads(attached.recv())["data"]
                assert state["item_id"] == f"{env}_{ITEMS[env][1]}"
                assert _refusal(url, f"?session_id={session.id}")[1]["code"] == "SESSION_ERROR"
                action = await session.expert_action()
                attached.send(json.dumps({"type": "step", "data": {"action": action}}))
                stepped = json.loads(attached.recv())["data"]
            shown = httpx.get(f"{url}/observation", params={"id": session.id}).json()
            assert stepped["observation"]["text"] == shown != expected.observation
            assert _sessions(url) == 1  # an attached session outlives its WebSocket
            await session.close()

    asyncio.run(scenario())
