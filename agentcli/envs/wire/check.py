"""``agentgym env check``: drive a server through create -> reset -> a few steps -> close."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agentcli.envs.registry import get_spec
from agentcli.envs.wire.client import EnvClient, RemoteSession
from agentcli.errors import EnvServerError


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str
    seconds: float


@dataclass
class CheckReport:
    url: str
    env: str
    results: list[CheckResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.results) and all(result.ok for result in self.results)


async def check_server(
    url: str, env: str, *, index: int = 0, steps: int = 3, timeout_s: float = 60.0
) -> CheckReport:
    """Run the probe; stops at the first failing stage and records why."""
    spec = get_spec(env)
    report = CheckReport(url=url, env=env)

    async def stage(name: str, call: Callable[[], Awaitable[str]]) -> bool:
        start = time.perf_counter()
        try:
            detail, ok = await call(), True
        except EnvServerError as exc:
            detail, ok = str(exc), False
        report.results.append(CheckResult(name, ok, detail, time.perf_counter() - start))
        return ok

    async with EnvClient(url, env, timeout_s=timeout_s, retries=1) as client:
        session: RemoteSession | None = None
        last: Any = None

        async def ready() -> str:
            await client.wait_until_ready(timeout_s)
            return "agentgym server" if client.boot_id else "server without /health (AgentGym's?)"

        async def create() -> str:
            nonlocal session
            session = await client.open()
            return f"session {session.id}"

        async def reset() -> str:
            nonlocal last
            last = await session.reset(index)
            if not last.observation.strip():
                raise EnvServerError("reset returned an empty observation")
            return _excerpt(last.observation)

        async def step() -> str:
            nonlocal last
            if client.boot_id:
                action = await session.expert_action() or spec.probe_action
            else:
                action = (last.available_actions or [spec.probe_action])[0]
            last = await session.step(action)
            return f"{action!r} -> {_excerpt(last.observation)} (reward {last.reward:g})"

        async def close() -> str:
            await session.close()
            return "closed" if client.has_close else "no /close here: the server keeps its sessions"

        if not (await stage("ready", ready) and await stage("create", create)):
            return report
        try:
            if await stage(f"reset item {index}", reset):
                for number in range(1, steps + 1):
                    if last.done or not await stage(f"step {number}", step):
                        break
        finally:
            await stage("close", close)
    return report


def _excerpt(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
