"""Reading the bash blocks of README.md and docs/ and running them as a reader would."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentcli.common import listen_error
from tests.support.processes import stop_group

ROOT = Path(__file__).parents[2]
PLACEHOLDER = "…"  # a line holding it is a pattern to fill in, not a command to run

# The pages' commands bind the ports they name (36008, 8765, 8000, ...): the tests that run
# them share one xdist worker, so two never bind one port at once.
FIXED_PORTS = pytest.mark.xdist_group("fixed-ports")


def bash_blocks(page: Path, *, after: str = "") -> list[str]:
    """The page's ```bash blocks, in order (those after the heading ``after``)."""
    text = page.read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.*?)```", text[text.index(after) :], re.S)


def run_block(block: str, cwd: Path, *, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run ``block`` line by line in ``cwd`` with this interpreter's ``agentgym`` first on the
    PATH, stopping at the first failing line (a line ending in ``&`` runs in the background
    until the block ends)."""
    script = "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + block
    environ = environment()
    wait_until_bindable(served_ports(block))
    # a session of its own: a block that runs out of time is stopped with all it started,
    # rather than leaving them to hold ports and cores for the tests after it
    process = subprocess.Popen(["bash", "-c", script], cwd=cwd, env=environ, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)  # fmt: skip
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_group(process)
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def served_ports(block: str) -> set[int]:
    """The fixed ports the block's servers listen on (``--port N``; 0 is any free one)."""
    return {int(port) for port in re.findall(r"--port (\d+)", block)} - {0}


def wait_until_bindable(ports: set[int], *, timeout: float = 90) -> None:
    """Wait until a server could listen on each of ``ports`` on 127.0.0.1 (the check our env
    server makes before it loads, ``listen_error``). Ports such as 36008 lie in the range the
    OS draws clients' ports from (32768-60999 on Linux), and a closed client connection keeps
    its port for 60 s (TIME_WAIT): the other tests' clients hold one now and then, which a
    bind refuses."""
    deadline = time.monotonic() + timeout
    for port in sorted(ports):
        while listen_error("127.0.0.1", port) is not None:
            if time.monotonic() > deadline:
                raise AssertionError(f"port {port} was still taken after {timeout:.0f} s")
            time.sleep(1)


def environment() -> dict[str, str]:
    """The environment a page's commands run in: this interpreter's ``agentgym`` first on the
    PATH, and this checkout's code, even where the installed agentgym is another checkout's."""
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }


def failure_text(run: subprocess.CompletedProcess[str]) -> str:
    return run.stdout[-2000:] + run.stderr[-3000:]


def run_page(page: str, cwd: Path, *, timeout: float = 600) -> str:
    """Run the first bash block of ``docs/<page>``; the stdout of its lines."""
    run = run_block(bash_blocks(ROOT / "docs" / page)[0], cwd, timeout=timeout)
    assert run.returncode == 0, f"{page}: {failure_text(run)}"
    return run.stdout
