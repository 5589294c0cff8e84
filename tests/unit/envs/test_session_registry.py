"""How long a server keeps sessions: as long as the client wants (AgentGym's trainers hold
a client across an epoch), unless --idle-timeout says otherwise or a full server needs room."""

from __future__ import annotations

import asyncio
import time

import pytest

from agentcli.envs.textcraft import SPEC
from agentcli.envs.wire.server import ServeConfig
from agentcli.envs.wire.sessions import (
    EVICTABLE_AFTER_S,
    HTTPError,
    SessionLimits,
    SessionRegistry,
)


@pytest.fixture(scope="module")
def environment():
    return SPEC.load()


def _unused_for(registry: SessionRegistry, session_id: int, seconds: float) -> None:
    registry.get(session_id).last_used = time.monotonic() - seconds


def test_without_idle_timeout_a_session_unused_for_hours_stays(environment):
    async def scenario() -> int:
        registry = SessionRegistry(environment, ServeConfig(env="textcraft").session_limits())
        session_id, _ = await registry.open()
        _unused_for(registry, session_id, 6 * 3600)
        reaped = await registry.reap_idle()
        registry.get(session_id)  # still there
        return reaped

    assert asyncio.run(scenario()) == 0


def test_with_idle_timeout_an_unused_session_is_reaped(environment):
    async def scenario() -> tuple[int, int]:
        registry = SessionRegistry(environment, SessionLimits(max_sessions=256, idle_timeout_s=60))
        old, _ = await registry.open()
        await registry.open()
        _unused_for(registry, old, 61)
        return await registry.reap_idle(), len(registry)

    assert asyncio.run(scenario()) == (1, 1)


def test_a_full_server_closes_its_longest_unused_session_to_make_room(environment):
    async def scenario() -> tuple[list[int], int]:
        registry = SessionRegistry(environment, SessionLimits(max_sessions=3))
        ids = [(await registry.open())[0] for _ in range(3)]
        _unused_for(registry, ids[0], EVICTABLE_AFTER_S + 10)
        _unused_for(registry, ids[1], EVICTABLE_AFTER_S + 20)  # the longest unused
        new, _ = await registry.open()
        with pytest.raises(HTTPError, match="no live session"):
            registry.get(ids[1])
        return [*ids, new], len(registry)

    ids, live = asyncio.run(scenario())
    assert live == 3 and ids[3] not in ids[:3]


def test_a_full_server_of_recently_used_sessions_answers_503(environment):
    async def scenario() -> None:
        registry = SessionRegistry(environment, SessionLimits(max_sessions=2))
        first, _ = await registry.open()
        await registry.open()
        _unused_for(registry, first, EVICTABLE_AFTER_S - 10)
        with pytest.raises(HTTPError, match="session limit reached") as refused:
            await registry.open()
        assert (refused.value.status, refused.value.retry_after_s) == (503, 1)
        assert len(registry) == 2

    asyncio.run(scenario())


def test_a_session_in_a_long_call_is_neither_reaped_nor_evicted(environment):
    async def scenario() -> tuple[int, int]:
        settings = SessionLimits(max_sessions=1, idle_timeout_s=1)
        registry = SessionRegistry(environment, settings)
        session_id, slot = await registry.open()
        async with slot.lock:  # as a reset that runs longer than the timeout holds it
            _unused_for(registry, session_id, 10)
            reaped = await registry.reap_idle()
            with pytest.raises(HTTPError, match="session limit reached"):
                await registry.open()
        return reaped, len(registry)

    assert asyncio.run(scenario()) == (0, 1)
