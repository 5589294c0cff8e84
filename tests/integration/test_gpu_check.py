"""scripts/gpu_check.sh, the GPU measurements in one script, where it can be tested: here, with
no GPU, it parses and stops at once with one line, before it writes anything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "scripts" / "gpu_check.sh"


def test_the_script_parses():
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)


def test_without_a_gpu_it_stops_at_once_with_one_line(tmp_path):
    no_gpu = {"CUDA_VISIBLE_DEVICES": "", "PYTHON": sys.executable, "WORK": str(tmp_path / "w")}
    run = subprocess.run(
        ["bash", str(SCRIPT)], capture_output=True, text=True, env={**os.environ, **no_gpu},
        timeout=60,
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.startswith("gpu_check: no GPU here (") and run.stderr.count("\n") == 1
    assert not (tmp_path / "w").exists()
