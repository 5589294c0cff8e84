"""The environments' LEAP configs end to end, scaled down (a few items, one epoch, a smaller
student): configs/alfworld.yaml and configs/webshop.yaml build their student with the env's
own text, run iterations 0 and 1 and the control, and report each model's test-split row
(and alfworld's success per task type)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.support.cli import agentgym

CONFIGS = Path(__file__).parents[2] / "configs"

pytestmark = pytest.mark.slow

SMALL_STUDENT = ["model.tiny.hidden=32", "model.tiny.layers=1", "model.tiny.corpus_items=2",
                 "train.hyperparameters.num_train_epochs=1"]  # fmt: skip
SCALED_DOWN = {
    "alfworld": [*SMALL_STUDENT, "collect.limit=3", "rollout.skip=3", "rollout.limit=2",
                 "rollout.max_rounds=8", "eval.limit=3", "eval.max_rounds=8"],
    "webshop": [*SMALL_STUDENT, "collect.limit=3", "rollout.skip=3", "rollout.limit=2",
                "rollout.max_rounds=4", "eval.limit=3", "eval.max_rounds=4"],
}  # fmt: skip
ALFWORLD = pytest.param(
    "alfworld",
    marks=[
        pytest.mark.alfworld,
        pytest.mark.skipif(
            importlib.util.find_spec("alfworld") is None,
            reason="the alfworld extra is not installed (pip install 'agentgym[alfworld]')",
        ),
    ],
)


@pytest.mark.parametrize("env", [ALFWORLD, "webshop"])
def test_an_env_config_runs_the_loop_and_reports_each_models_test_row(tmp_path, env):
    run = tmp_path / "runs" / env
    done = agentgym(
        "iterate", "--config", str(CONFIGS / f"{env}.yaml"), "--iters", "0-1", f"run={run}",
        *SCALED_DOWN[env], timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    corpus = json.loads((run / "seed0" / "student" / "tokenizer_corpus.json").read_text())
    assert corpus["corpus"] == [env]
    reported = agentgym("report", str(run), timeout=120)
    assert reported.returncode == 0, reported.stderr
    document = json.loads((run / "report.json").read_text())
    rows = [(row["iteration"], row["control"], row["env"], row["split"], row["items"])
            for row in document["rows"]]  # fmt: skip
    assert rows == [(0, False, env, "test", 3), (1, False, env, "test", 3),
                    (1, True, env, "test", 3)]  # fmt: skip
    if env == "alfworld":
        typed = document["task_types"]
        assert {t["task_type"] for t in typed} <= set(_alfworld_task_types())
        assert sum(t["items"] for t in typed if t["iteration"] == 0 and not t["control"]) == 3
        episodes = run / "seed0" / "alfworld" / "iter0" / "eval" / "episodes.jsonl"
        assert all("replaced_actions" in json.loads(line)["meta"] for line in episodes.open())
    else:  # AgentGym's BC data: its conversation format with loss flags
        [data] = (run / "seed0" / "iter0" / "data").glob("bc.json")
        conversation = json.loads(data.read_text())[0]["conversations"]
        assert {turn["loss"] for turn in conversation if turn["from"] == "gpt"} <= {True, False}
        assert "mean_score" in document["rows"][0]
        # trained in AgentGym's [INST] format, the model is prompted in it (not ChatML)
        template = (run / "seed0" / "iter0" / "model" / "chat_template.jinja").read_text()
        assert "[INST]" in template and "<|im_start|>" not in template


def _alfworld_task_types() -> tuple[str, ...]:
    from agentcli.envs.alfworld.generation import TASK_TYPES

    return tuple(TASK_TYPES)
