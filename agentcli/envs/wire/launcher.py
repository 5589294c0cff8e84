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
from contextlib import ExitStack, contextmanager
from pathlib import Path

from agentcli.common import die_with_parent, free_port, wait_until_answering
from agentcli.envs.base import EnvSpec
from agentcli.envs.registry import RUN_A_SERVER, require_simulator
from agentcli.errors import EnvServerError

log = logging.getLogger("agentgym.launcher")

MAX_BUILTIN_SERVERS = 4
READY_TIMEOUT_S = 180.0  # sciworld's first JVM and alfworld's planner take a while on 2 cores


def _wait_ready(url: str, process: subprocess.Popen, log: Path | None, timeout_s: float) -> None:
    state = wait_until_answering(f"{url}/health", process, time.monotonic() + timeout_s)
    if state == "exited":
        where = f"; its log: {log}" if log else ""
        raise EnvServerError(f"the environment server exited with code {process.returncode}{where}")
    if state == "timed out":
        raise EnvServerError(
            f"the environment server at {url} was not ready after {timeout_s:.0f} s"
        )


@contextmanager
def server_process(
    env: str,
    *args: str,
    port: int | None = None,
    log: Path | None = None,
    environ: dict[str, str] | None = None,
    ready_timeout_s: float = READY_TIMEOUT_S,
) -> Iterator[tuple[str, subprocess.Popen]]:
    """``python -m agentcli.envs.wire.serve ENV`` (the server `agentgym env serve ENV` runs) in a
    child process on a free loopback port; ``args`` are more of its options (``--max-sessions 8``).

    Yields the base URL and the process; stops the server (SIGINT, then kill) on exit.
    """
    port = port or free_port()
    command = [sys.executable, "-m", "agentcli.envs.wire.serve", env, "--port", str(port)]
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


def builtin_server_count(spec: EnvSpec) -> int:
    """One server, or one per core (at most ``MAX_BUILTIN_SERVERS``) for an env whose engine
    runs one call at a time per process."""
    return min(os.cpu_count() or 1, MAX_BUILTIN_SERVERS) if spec.serial_engine else 1


@contextmanager
def env_servers(spec: EnvSpec, urls: list[str]) -> Iterator[list[str]]:
    """The given server URLs, or built-in servers started for the duration."""
    if urls:
        yield urls
        return
    require_simulator(spec, otherwise=RUN_A_SERVER)
    count = builtin_server_count(spec)
    logs = [
        Path(tempfile.gettempdir()) / f"agentgym-{spec.name}-server-{os.getpid()}-{n}.log"
        for n in range(count)
    ]
    log.info(
        "starting %s %s server%s, log%s in %s (--env-server URL uses yours)",
        count,
        spec.name,
        "s" * (count > 1),
        "s" * (count > 1),
        ", ".join(map(str, logs)),
    )
    with ExitStack() as servers:
        yield [servers.enter_context(server_process(spec.name, log=path))[0] for path in logs]
