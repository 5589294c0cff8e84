"""The `agentgym` executable run as a user runs it: a fresh process, plain output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def agentgym(
    *args: str, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    return subprocess.run(
        [sys.executable, "-m", "agentcli.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )
