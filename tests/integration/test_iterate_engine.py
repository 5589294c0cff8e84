"""``iterate`` with its student served by an engine each stage launches (``policy.kind: vllm``),
on the tiny model, with a stand-in for vLLM that speaks the OpenAI wire
(tests/support/engine_stand_in.py): each rollout and eval gets an engine of its own on the
checkpoint it plays, and none is left running when the command ends."""

from __future__ import annotations

import json

import pytest
import yaml

from agentcli.data.jsonl import read_records
from agentcli.records import Episode
from tests.support.cli import agentgym
from tests.support.engine_stand_in import COMMAND, ROOT, launches, running


@pytest.mark.slow
def test_each_rollout_and_eval_serves_its_own_checkpoint(tiny_model, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the stand-in's module, for the engine process
    runs = tmp_path / "runs" / "served"
    run = runs / "seed0"  # the config's seed
    student = {"max_new_tokens": 16, "kind": "vllm", "command": COMMAND}
    episodes = {"limit": 2, "concurrency": 2, "max_rounds": 2, "policy": student}
    config = tmp_path / "served.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "run": str(runs),
                "envs": ["textcraft"],
                "model": str(tiny_model),
                "teacher": {"kind": "oracle"},
                "collect": {"limit": 4, "concurrency": 2},
                "rollout": episodes,
                "eval": episodes,
                "data": {"holdout": 0.0},
                "train": {
                    "hyperparameters": {"num_train_epochs": 1, "per_device_train_batch_size": 8},
                    "rendering": {"max_length": 512},
                },
            }
        )
    )

    result = agentgym("iterate", "--config", str(config), "--iters", "0-1", timeout=600)

    assert result.returncode == 0, result.stderr[-3000:]
    where = run / "textcraft"
    served = {
        stage: [launch["model"] for launch in launches(log)]
        for stage, log in (
            ("iter0 eval", where / "iter0" / "eval" / "vllm.log"),
            ("iter1 rollout", where / "iter0" / "rollout" / "vllm.log"),
            ("iter1 eval", where / "iter1" / "eval" / "vllm.log"),
        )
    }
    assert served == {
        "iter0 eval": [str(run / "iter0" / "model")],
        "iter1 rollout": [str(run / "iter0" / "model")],
        "iter1 eval": [str(run / "iter1" / "model")],
    }
    for log in run.rglob("vllm.log"):
        for launch in launches(log):
            assert not running(launch["pid"]) and not running(launch["child"]), log
    for episode in read_records(where / "iter1" / "eval" / "episodes.jsonl", Episode):
        assert episode.meta["policy"] == f"vllm:{run / 'iter1' / 'model'}"
    manifest = json.loads((run / "manifest.json").read_text())["stages"]
    assert all(entry["status"] == "done" for entry in manifest.values())
