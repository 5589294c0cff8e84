"""Run the same code in fresh Python processes, to show results do not depend on the process."""

from __future__ import annotations

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
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in seeds
    ]
