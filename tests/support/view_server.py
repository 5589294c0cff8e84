"""``agentgym view PATH`` run as a user runs it, in a child process on a free loopback port,
for as long as a ``with`` block lasts (tests, the screenshot script, the bench)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

_SERVING = re.compile(r"serving .* at (?P<url>http://\S+/)")


@dataclass(frozen=True)
class RunningView:
    url: str
    process: subprocess.Popen[str]
    started_s: float  # from the process's start to its "serving" line (indexing included)


@contextmanager
def running_view(path: Path, *args: str) -> Iterator[RunningView]:
    """``agentgym view PATH --port 0 ARGS``."""
    with serving(["view", str(path), "--port", "0", *args]) as running:
        yield running


@contextmanager
def serving(
    arguments: list[str], *, cwd: Path | None = None, timeout: float = 120
) -> Iterator[RunningView]:
    """``agentgym ARGUMENTS`` (a view that serves), until the block ends."""
    environ = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "agentcli.cli.main", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environ,
        cwd=cwd,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""  # blocks until it serves
        match = _SERVING.search(line)
        if match is None:
            process.kill()
            _, errors = process.communicate(timeout=timeout)
            raise RuntimeError(f"agentgym {' '.join(arguments)} did not serve: {line}{errors}")
        yield RunningView(match["url"], process, time.perf_counter() - started)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
