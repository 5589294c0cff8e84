"""Start an environment server for a command that was given no ``--env-server``."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from agentcli.common import die_with_parent, free_port
from agentcli.envs.base import EnvSpec
from agentcli.errors import EnvServerError, EnvUnavailableError, UsageError

log = logging.getLogger("agentgym.launcher")

READY_TIMEOUT_S = 180.0  # sciworld's first JVM and alfworld's planner take a while on 2 cores


def _wait_ready(url: str, process: subprocess.Popen, log: Path | None, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            where = f"; its log: {log}" if log else ""
            raise EnvServerError(
                f"the environment server exited with code {process.returncode}{where}"
            )
        try:
            if httpx.get(f"{url}/health", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise EnvServerError(f"the environment server at {url} was not ready after {timeout_s:.0f} s")


@contextmanager
def server_process(
    env: str,
    *args: str,
    port: int | None = None,
    log: Path | None = None,
    environ: dict[str, str] | None = None,
    ready_timeout_s: float = READY_TIMEOUT_S,
) -> Iterator[tuple[str, subprocess.Popen]]:
    """``python -m agentcli.envs.serve ENV`` (the server `agentgym env serve ENV` runs) in a child
    process on a free loopback port; ``args`` are more of its options (``--max-sessions 8``).

    Yields the base URL and the process; stops the server (SIGINT, then kill) on exit.
    """
    port = port or free_port()
    command = [sys.executable, "-m", "agentcli.envs.serve", env, "--port", str(port)]
    with open(log or os.devnull, "w") as out:
        process = subprocess.Popen(
            [*command, *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(environ or {})},
            preexec_fn=die_with_parent,  # and none of its JVMs
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_ready(url, process, log, ready_timeout_s)
            yield url, process
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextmanager
def env_servers(spec: EnvSpec, urls: list[str]) -> Iterator[list[str]]:
    """The given server URLs, or a built-in server started for the duration."""
    if urls:
        yield urls
        return
    if spec.load is None:
        raise UsageError(f"{spec.name} has no built-in server: run one and pass --env-server URL")
    reason = spec.missing()
    if reason:
        raise EnvUnavailableError(f"{spec.name} cannot run here: {reason}")
    log_file = Path(tempfile.gettempdir()) / f"agentgym-{spec.name}-server-{os.getpid()}.log"
    log.info("starting a %s server, log in %s (--env-server URL uses yours)", spec.name, log_file)
    with server_process(spec.name, log=log_file) as (url, _):
        yield [url]
