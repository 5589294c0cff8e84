"""Start real environment servers on free loopback ports, as `agentgym env serve` does."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_ready(url: str, process: subprocess.Popen, timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            if httpx.get(f"{url}/health", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"server at {url} not ready after {timeout_s} s")


@contextmanager
def running_server(
    env: str, *args: str, port: int | None = None, log: Path | None = None, hash_seed: str = "0"
) -> Iterator[str]:
    """`agentgym env serve ENV` in a child process; yields its base URL; stops it after."""
    with running_server_process(env, *args, port=port, log=log, hash_seed=hash_seed) as (url, _):
        yield url


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


@contextmanager
def running_server_process(
    env: str, *args: str, port: int | None = None, log: Path | None = None, hash_seed: str = "0"
) -> Iterator[tuple[str, subprocess.Popen]]:
    """Like ``running_server``, also yielding the server process."""
    port = port or free_port()
    command = [sys.executable, "-m", "agentcli.cli.main", "env", "serve", env, "--port", str(port)]
    out = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [*command, *args],
        stdout=out,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONHASHSEED": hash_seed},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, process)
        yield url, process
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log:
            out.close()
