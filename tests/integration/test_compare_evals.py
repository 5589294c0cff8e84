"""docs/rollout.md's "Comparing two evals" as its reader meets it: two evals of the same
items, their metrics.json naming what was evaluated, and ``report A B`` pairing them."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import agentgym
from tests.support.docs import ROOT, bash_blocks, failure_text, run_block


@pytest.mark.slow
def test_two_evals_compare_item_by_item_as_the_page_shows(tmp_path):
    [block] = bash_blocks(ROOT / "docs" / "rollout.md", after="### Comparing two evals")[:1]
    run = run_block(block, tmp_path, timeout=600)
    assert run.returncode == 0, failure_text(run)
    # the expert needs more than one turn for each of these goals
    expected = "textcraft (test): A − B: +100.0 ± 0.0 points (paired over 4 items: 4 wins,"
    assert expected in run.stdout
    evals = tmp_path / "runs" / "eval"
    [oracle] = json.loads((evals / "oracle/textcraft/metrics.json").read_text())
    [capped] = json.loads((evals / "oracle-1-turn/textcraft/metrics.json").read_text())
    assert (oracle["policy"], oracle["split"], oracle["model"]) == ("oracle", "test", None)
    assert (oracle["success_rate"], oracle["success_se"]) == (1.0, 0.0)
    assert capped["success_rate"] == 0.0
    assert capped["settings_digest"] != oracle["settings_digest"]  # max_rounds differs

    refused = agentgym("report", "runs/eval/oracle/textcraft", "runs", cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "error: runs holds no episodes.jsonl: pass an eval's output directory (e.g."
        " runs/eval/<model>/<env>, or a run's <env>/iter<k>/eval)"
    )
