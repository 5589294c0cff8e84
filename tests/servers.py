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
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log:
            out.close()
