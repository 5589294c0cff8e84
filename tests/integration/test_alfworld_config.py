"""configs/alfworld.yaml end to end, scaled down (a few items, one epoch, a smaller student):
its student learns ALFWorld's text, iterations 0 and 1 and the control run on generated games,
and the report holds each model's test-split row and its success per task type."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.support.cli import agentgym

CONFIG = Path(__file__).parents[2] / "configs" / "alfworld.yaml"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.alfworld,
    pytest.mark.skipif(
        importlib.util.find_spec("alfworld") is None,
        reason="the alfworld extra is not installed (pip install 'agentgym[alfworld]')",
    ),
]

SCALED_DOWN = [
    "model.tiny.hidden=32", "model.tiny.layers=1", "model.tiny.corpus_items=2",
    "collect.limit=3", "rollout.skip=3", "rollout.limit=2", "rollout.max_rounds=8", "eval.limit=3",
    "eval.max_rounds=8",
    "train.hyperparameters.num_train_epochs=1",
]  # fmt: skip


def test_the_alfworld_config_runs_the_loop_and_reports_task_types(tmp_path):
    run = tmp_path / "runs" / "alfworld"
    done = agentgym(
        "iterate", "--config", str(CONFIG), "--iters", "0-1", f"run={run}", *SCALED_DOWN,
        timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads((run / "seed0" / "student" / "tokenizer_corpus.json").read_text())[
        "corpus"
    ] == ["alfworld"]
    reported = agentgym("report", str(run), timeout=120)
    assert reported.returncode == 0, reported.stderr
    document = json.loads((run / "report.json").read_text())
    rows = [(row["iteration"], row["control"], row["env"], row["split"], row["items"])
            for row in document["rows"]]  # fmt: skip
    assert rows == [(0, False, "alfworld", "test", 3), (1, False, "alfworld", "test", 3),
                    (1, True, "alfworld", "test", 3)]  # fmt: skip
    typed = document["task_types"]
    assert {t["task_type"] for t in typed} <= set(_task_types())
    assert sum(t["items"] for t in typed if t["iteration"] == 0 and not t["control"]) == 3
    episodes = run / "seed0" / "alfworld" / "iter0" / "eval" / "episodes.jsonl"
    assert all("replaced_actions" in json.loads(line)["meta"] for line in episodes.open())


def _task_types() -> tuple[str, ...]:
    from agentcli.envs.alfworld.generation import TASK_TYPES

    return tuple(TASK_TYPES)
