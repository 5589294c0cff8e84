"""The README's commands run as written: its "What is here" block, line by line in order, in
an empty directory (a line ending in ``&`` runs in the background until the block ends)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).parents[2] / "README.md"


def section_block(text: str, heading: str) -> str:
    """The first ```bash block after ``heading``."""
    after = text[text.index(heading) :]
    return after.split("```bash\n", 1)[1].split("```", 1)[0]


@pytest.mark.slow
def test_the_what_is_here_block_runs_verbatim_and_chains(tmp_path):
    block = section_block(README.read_text(encoding="utf-8"), "## What is here")
    assert "agentgym build-data --method sft --iter 1 --run runs/demo" in block
    script = "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + block
    environ = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    run = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=environ, capture_output=True,
                         text=True, timeout=1200)  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert "verdict: PASS" in run.stdout
    for made in ("runs/demo/demos.json", "runs/demo/iter0/model/config.json",
                 "runs/demo/iter0/correction/corrections.jsonl", "runs/demo/iter1/data/sft.jsonl",
                 "runs/demo/iter1/model/config.json",
                 "runs/eval/demo-iter1-model/textcraft/metrics.json"):  # fmt: skip
        assert (tmp_path / made).is_file(), made
