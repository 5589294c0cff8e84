"""Live sessions of one env server, by id: a cap, idle reaping, a lock per session.

Both wires a server speaks (AgentGym's HTTP routes, OpenEnv's WebSocket sessions) hold their
sessions here, so the cap and the reaping count them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agentcli.envs.base import Environment, PromptStyle, Session, Transition

log = logging.getLogger("agentgym.server")
T = TypeVar("T")
# A full server closes its longest-unused session to make room once it has been unused this
# long (or --idle-timeout, when given): an episode waits far less between steps.
EVICTABLE_AFTER_S = 300.0


@dataclass(frozen=True)
class SessionLimits:
    """What bounds a server's sessions (``agentgym env serve``'s --max-sessions and
    --idle-timeout)."""

    max_sessions: int
    idle_timeout_s: float | None = None  # None: never reaped, only closed to make room


class HTTPError(Exception):
    def __init__(self, status: int, message: str, retry_after_s: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s


@dataclass
class Slot:
    session: Session
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_used: float = field(default_factory=time.monotonic)
    index: int | None = None  # None before a reset, or for a task given at /create
    last: Transition | None = None
    detail: dict[str, Any] = field(default_factory=dict)  # GET /detail, as AgentGym keeps it
    # OpenEnv's state of the episode: steps since the last reset (over either wire), and the
    # episode id an OpenEnv reset named or was given
    steps: int = 0
    episode_id: str | None = None

    def began(self, transition: Transition, index: int | None, episode_id: str | None = None):
        """A reset (or a task given at /create) started an episode."""
        self.last, self.index, self.steps, self.episode_id = transition, index, 0, episode_id

    def stepped(self, transition: Transition) -> None:
        self.last = transition
        self.steps += 1


class SessionRegistry:
    """Live sessions by id, with a cap and idle reaping."""

    def __init__(self, environment: Environment, limits: SessionLimits) -> None:
        self.environment = environment
        self.limits = limits
        self._slots: dict[int, Slot] = {}
        self._ids = itertools.count()

    def __len__(self) -> int:
        return len(self._slots)

    async def open(self, style: PromptStyle | None = None) -> tuple[int, Slot]:
        while len(self._slots) >= self.limits.max_sessions:
            if not await self._make_room():
                raise HTTPError(
                    503,
                    f"session limit reached ({self.limits.max_sessions} live sessions, all"
                    " in use); close unused sessions or restart the server with a larger"
                    " --max-sessions",
                    retry_after_s=1,
                )
        session_id = next(self._ids)
        # Reserve the id before the (possibly slow) open so the cap holds under concurrency.
        self._slots[session_id] = None  # type: ignore[assignment]
        try:
            session = await asyncio.to_thread(self.environment.open_session, style or "agentgym")
        except BaseException:
            del self._slots[session_id]
            raise
        slot = self._slots[session_id] = Slot(session)
        return session_id, slot

    def get(self, session_id: int) -> Slot:
        slot = self._slots.get(session_id)
        if slot is None:
            raise HTTPError(
                404, f"no live session with id {session_id}; create one with POST /create"
            )
        slot.last_used = time.monotonic()
        return slot

    async def close(self, session_id: int) -> None:
        slot = self.get(session_id)
        del self._slots[session_id]
        async with slot.lock:
            await asyncio.to_thread(slot.session.close)

    async def _make_room(self) -> bool:
        """Close the longest-unused session if it has been unused long enough and is not
        in the middle of a call; False when none may go."""
        unused_for = self.limits.idle_timeout_s or EVICTABLE_AFTER_S
        idle = self._unused_for(unused_for)
        if not idle:
            return False
        session_id = idle[0]
        log.info(
            "closing session %s to make room (%d sessions, the limit): unused for over %.0f s",
            session_id,
            len(self._slots),
            unused_for,
        )
        await self.close(session_id)
        return True

    def _unused_for(self, seconds: float) -> list[int]:
        """Sessions with no call in flight and none for ``seconds``, longest unused first."""
        cutoff = time.monotonic() - seconds
        idle = [
            (slot.last_used, session_id)
            for session_id, slot in self._slots.items()
            if slot and slot.last_used < cutoff and not slot.lock.locked()
        ]
        return [session_id for _, session_id in sorted(idle)]

    async def reap_idle(self) -> int:
        """Close every session unused for ``--idle-timeout`` (none when it is not set)."""
        if self.limits.idle_timeout_s is None:
            return 0
        idle = self._unused_for(self.limits.idle_timeout_s)
        for session_id in idle:
            log.info(
                "closing session %s: idle for over %.0f s", session_id, self.limits.idle_timeout_s
            )
            with contextlib.suppress(HTTPError):
                await self.close(session_id)
        return len(idle)

    async def close_all(self) -> None:
        for session_id in [sid for sid, slot in self._slots.items() if slot]:
            await self.close(session_id)


async def run_locked(slot: Slot, call: Callable[[], T]) -> T:
    """``call`` on the session's simulator, one at a time per session, off the event loop."""
    async with slot.lock:
        try:
            return await asyncio.to_thread(call)
        finally:
            slot.last_used = time.monotonic()  # unused counts from a call's end
