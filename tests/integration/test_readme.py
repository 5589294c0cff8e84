"""The README's commands run as written: its "What is here" block, line by line in order, in
an empty directory (a line ending in ``&`` runs in the background until the block ends)."""

from __future__ import annotations

import json

import pytest

from tests.support.docs import FIXED_PORTS, ROOT, bash_blocks, failure_text, run_block

pytestmark = FIXED_PORTS


@pytest.mark.slow
def test_the_what_is_here_block_runs_verbatim_and_chains(tmp_path):
    block = bash_blocks(ROOT / "README.md", after="## What is here")[0]
    assert "agentgym build-data --method sft --iter 1 --run runs/demo" in block
    run = run_block(block, tmp_path, timeout=1200)
    assert run.returncode == 0, failure_text(run)
    assert "verdict: PASS" in run.stdout
    for made in ("runs/demo/demos.json", "runs/demo/iter0/model/config.json",
                 "runs/demo/iter0/correction/corrections.jsonl", "runs/demo/iter1/data/sft.jsonl",
                 "runs/demo/iter1/model/config.json",
                 "runs/eval/demo-iter1-model/textcraft/metrics.json"):  # fmt: skip
        assert (tmp_path / made).is_file(), made
    # the eval names the model it evaluated, by its path and a digest of its weights
    [overall] = json.loads((tmp_path / made).read_text())
    assert overall["model"] == "runs/demo/iter1/model" and len(overall["weights_digest"]) == 64
