"""docs/train.md's tracking block as its reader meets it: a tiny training run with trackio
logs its losses where the page says, under the project and run name given; stdout keeps
only the result line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_train import agentgym_conversation
from tests.support.docs import ROOT, bash_blocks, failure_text, run_block


@pytest.mark.slow
def test_trackio_logs_land_where_the_page_says(tiny_model, tmp_path):
    shutil.copytree(tiny_model, tmp_path / "models" / "tiny")  # docs/model.md made it
    data = [agentgym_conversation(index) for index in range(8)]
    (tmp_path / "agenttraj.json").write_text(json.dumps(data))
    [block] = bash_blocks(ROOT / "docs" / "train.md", after="## Tracking and progress")[:1]

    run = run_block(block, tmp_path, timeout=600)
    assert run.returncode == 0, failure_text(run)
    # stdout: the training's result line, then trackio's listing; trackio's own lines on stderr
    result, *listing = run.stdout.splitlines()
    assert result.startswith("bc: 2 steps (at step 2),") and result.endswith("→ runs/x/bc")
    assert listing == ["Runs in 'textcraft-bc':", "  - first"]
    assert "Trackio project initialized: textcraft-bc" in run.stderr
    # the page: $HF_HOME/trackio/<project>.db (the tests' HF_HOME is a temp folder)
    assert (Path(os.environ["HF_HOME"]) / "trackio" / "textcraft-bc.db").is_file()
    losses = _metric("textcraft-bc", "first", "train/loss")
    assert len(losses) == 1 and losses[0] > 0  # logged at the first step (and every 10th)
    assert not (tmp_path / "runs/x/bc/checkpoints/runs").exists()  # nothing of it there


def _metric(project: str, run: str, name: str) -> list[float]:
    trackio = Path(sys.executable).parent / "trackio"
    shown = subprocess.run(
        [str(trackio), "get", "metric", "--project", project, "--run", run, "--metric", name,
         "--json"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return [point["value"] for point in json.loads(shown.stdout)["values"]]
