"""Run the same code in fresh Python processes, to show results do not depend on the process."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys


def outputs_under_hash_seeds(code: str, seeds: tuple[str, ...] = ("1", "4242")) -> list[str]:
    """stdout of ``python -c code`` once per ``PYTHONHASHSEED`` (set iteration order differs)."""
    return [
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            # the test's isolated home and caches, nothing else of its environment
            env={
                "PYTHONHASHSEED": seed,
                "PATH": "",
                **{key: os.environ[key] for key in ("HOME", "XDG_CACHE_HOME") if key in os.environ},
            },
        ).stdout
        for seed in seeds
    ]


def heavy_modules_imported_by(module: str, packages: set[str], then: str = "") -> list[str]:
    """Which modules of ``packages`` importing ``module`` (and running the code ``then``, if
    given) loads, in a fresh process."""
    probe = (
        f"import sys, json, {module}\n{then}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in"
        f" {sorted(packages)!r})))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(loaded)


def stop_group(process: subprocess.Popen) -> None:
    """SIGKILL the process group ``process`` leads (started with ``start_new_session=True``),
    so that what it started goes too, and reap it; a group that has already exited is left
    as it is."""
    with contextlib.suppress(ProcessLookupError):  # every process of the group has ended
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


_AS_FROM_A_TERMINAL = (
    "import os, signal, sys\n"
    "signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})\n"
    "os.execv(sys.argv[1], sys.argv[1:])"
)


def as_from_a_terminal(command: list[str]) -> list[str]:
    """``command`` run with SIGINT at its default and unblocked, as a shell's foreground
    command has it, so that a test's SIGINT is the user's Ctrl-C: a disposition or mask that
    the test process was left with (both are inherited across exec) would make the command
    ignore it. ``command[0]`` is an executable's path."""
    return [sys.executable, "-c", _AS_FROM_A_TERMINAL, *command]
