"""Real environment servers on free loopback ports for tests, as `agentgym env serve` runs them
(through ``python -m agentcli.envs.wire.serve``, the entry point the launcher spawns)."""

from __future__ import annotations

import asyncio
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

from agentcli.common import free_port
from agentcli.envs.registry import get_spec
from agentcli.envs.wire.client import EnvClient
from agentcli.envs.wire.launcher import server_process

__all__ = [
    "app_in_thread", "child_commands", "free_port", "running_server", "running_server_process",
    "slow_proxy",
]  # fmt: skip


@contextmanager
def running_server_process(
    env: str, *args: str, port: int | None = None, hash_seed: str = "0"
) -> Iterator[tuple[str, subprocess.Popen]]:
    """A server with a fixed hash seed (tests compare processes with different ones)."""
    with server_process(env, *args, port=port, environ={"PYTHONHASHSEED": hash_seed}) as running:
        yield running


@contextmanager
def running_server(
    env: str, *args: str, port: int | None = None, hash_seed: str = "0"
) -> Iterator[str]:
    with running_server_process(env, *args, port=port, hash_seed=hash_seed) as (url, _):
        yield url


@contextmanager
def app_in_thread(app: Any, port: int | None = None) -> Iterator[str]:
    """``app`` served by uvicorn in a background thread on loopback (``port``, else a free
    one) until the block ends; yields its base URL. For stand-ins of servers that cannot run
    here (AgentGym's, a model endpoint)."""
    port = port or free_port()
    config = uvicorn.Config(app, port=port, log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        threading.Event().wait(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def child_commands(pid: int) -> list[str]:
    """Command names of the direct children of a process (Linux /proc)."""
    names = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                names.append((stat.parent / "comm").read_text().strip())
        except (OSError, IndexError, ValueError):
            continue  # the process ended while we looked
    return names


async def expert_episodes(
    url: str, env: str, items: list[int], style: str | None = None
) -> dict[int, bool]:
    """Whether the server's expert wins each item (its episodes at once, each session closed),
    played through our client as a rollout plays them."""
    async with EnvClient(url, env, style=style) as client:

        async def episode(index: int) -> bool:
            session = await client.open()
            try:
                transition = await session.reset(index)
                for _ in range(get_spec(env).max_rounds):
                    if transition.done:
                        break
                    transition = await session.step(await session.expert_action())
                return transition.success
            finally:
                await session.close()

        results = await asyncio.gather(*(episode(i) for i in items))
        return dict(zip(items, results, strict=True))


def slow_proxy(target: str, step_delay_s: float) -> Any:
    """An app that forwards every request to the env server at ``target``, each ``/step``
    after ``step_delay_s``: a run through it stays busy long enough to be interrupted midway."""
    import httpx
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def forward(request: Request) -> Response:
        if request.url.path == "/step":
            await asyncio.sleep(step_delay_s)
        async with httpx.AsyncClient(base_url=target, timeout=60) as client:
            upstream = await client.request(
                request.method,
                request.url.path,
                params=request.query_params,
                content=await request.body(),
                headers={"content-type": request.headers.get("content-type", "")},
            )
        return Response(
            upstream.content,
            status_code=upstream.status_code,
            media_type=upstream.headers.get("content-type"),
        )

    methods = ["GET", "POST", "DELETE"]
    return Starlette(routes=[Route("/{path:path}", forward, methods=methods)])
