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
