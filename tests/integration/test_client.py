"""Our client against our server (including a restart) and against an AgentGym-style server."""

from __future__ import annotations

import asyncio

import pytest

from agentcli.envs.wire.client import KEEPALIVE_EXPIRY_S, EnvClient
from agentcli.errors import EnvServerError, UnreachableError
from tests.support.agentgym_style_server import agentgym_style_server
from tests.support.dropping_proxy import dropping_proxy
from tests.support.servers import free_port, running_server


def test_client_recovers_a_session_after_the_server_restarts(caplog):
    port = free_port()

    async def scenario() -> tuple[str, str, bool]:
        async with EnvClient(f"http://127.0.0.1:{port}", "textcraft", backoff_s=0.2) as client:
            with running_server("textcraft", port=port):
                await client.wait_until_ready()
                session = await client.open()
                await session.reset(7)
                first = await session.expert_action()
                await session.step(first)
                before = (await session.step("inventory")).observation
            with running_server("textcraft", port=port):
                after = (await session.step("inventory")).observation
                transition = await session.step(await session.expert_action())
                while not transition.done:
                    transition = await session.step(await session.expert_action())
                return before, after, transition.success

    with caplog.at_level("WARNING", logger="agentgym.client"):
        before, after, success = asyncio.run(scenario())
    assert before == after  # the replayed state is the state the session had
    assert success
    assert "replaying 2 actions" in caplog.text


def test_a_connection_reset_mid_step_replays_the_session_and_the_episode_goes_on(caplog):
    port = free_port()

    async def scenario(url: str) -> tuple[bool, list[str]]:
        async with EnvClient(url, "textcraft") as client:
            await client.wait_until_ready()
            session = await client.open()
            await session.reset(7)
            observations = []
            transition = await session.step(await session.expert_action())
            while not transition.done:
                observations.append(transition.observation)
                transition = await session.step(await session.expert_action())
            return transition.success, observations

    with running_server("textcraft", port=port):
        with (
            dropping_proxy(port, drop=b"POST /step", nth={2}) as url,
            caplog.at_level("WARNING", logger="agentgym.client"),
        ):
            dropped = asyncio.run(scenario(url))
        undisturbed = asyncio.run(scenario(f"http://127.0.0.1:{port}"))
    assert dropped == undisturbed and dropped[0]  # the same episode, won
    assert "connection dropped during POST /step (ReadError)" in caplog.text
    assert "replaying 1 actions" in caplog.text


def test_connections_expire_before_the_servers_close_them_for_idleness():
    import uvicorn

    assert uvicorn.Config(app=None).timeout_keep_alive > KEEPALIVE_EXPIRY_S


def test_client_drives_an_agentgym_style_server_and_reads_its_errors():
    async def scenario(url: str) -> tuple[bool, str]:
        async with EnvClient(url, "textcraft") as client:
            await client.wait_until_ready(timeout_s=10)
            session = await client.open()
            await session.reset(3)  # item 3: birch planks
            await session.step("get 1 birch logs")
            transition = await session.step("craft 4 birch planks using 1 birch logs")
            session.id = 999  # a session the server does not know: it answers 200 + "error"
            with pytest.raises(EnvServerError, match="not valid"):
                await session.step("inventory")
            return transition.success, transition.observation

    with agentgym_style_server() as server:
        success, observation = asyncio.run(scenario(server.url))
    assert success, observation  # inferred from reward and done: that server sends no success


def test_unreachable_server_is_one_clear_error():
    async def scenario() -> None:
        async with EnvClient(f"http://127.0.0.1:{free_port()}", "textcraft", retries=1) as client:
            await client.open()

    with pytest.raises(UnreachableError, match="cannot reach the textcraft server") as error:
        asyncio.run(scenario())
    assert "\n" not in str(error.value)
