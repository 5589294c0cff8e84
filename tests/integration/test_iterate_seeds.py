"""Seeds on a reduced quickstart (tests/fixtures/iterate-tiny.yaml, iteration 0, a student the
run builds): the same seed in two run directories gives the same report.json but for its
timings, another seed another student; the trained model keeps its view, so `agentgym eval
--model` alone plays it as the run's own eval did; a view other than its own is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import agentgym

FIXTURE = Path(__file__).parents[1] / "fixtures" / "iterate-tiny.yaml"
# a view other than the default, as the quickstart's is; eval's replies as long as `agentgym
# eval`'s by default (the fixture caps them at 16 tokens, which a random student always fills)
VIEW = ("view.history_steps=0", "view.instruction=false", "view.reasons=false",
        "eval.policy.max_new_tokens=128")  # fmt: skip


def iterate(run: Path, *args: str) -> None:
    done = agentgym(
        "iterate", "--config", str(FIXTURE), "--iters", "0", *args, f"run={run}",
        "model={tiny: {hidden: 32, layers: 1}}", "collect.limit=3", "annotate=false", *VIEW,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]


def actions(path: Path) -> dict[str, list[str]]:
    episodes = (json.loads(line) for line in path.read_text().splitlines())
    return {e["item_id"]: [step["action"] for step in e["steps"]] for e in episodes}


@pytest.mark.slow
def test_a_seed_reproduces_its_report_and_its_model_plays_as_the_run_evaluated_it(tmp_path):
    first, again = tmp_path / "first", tmp_path / "again"
    iterate(first, "--seed", "1")
    iterate(again, "--seed", "1")
    reports = [json.loads((run / "report.json").read_text()) for run in (first, again)]
    for report in reports:
        del report["timings"]
    assert reports[0] == reports[1]  # the same seed: the same results, the same student
    assert reports[0]["seeds"] == [1]
    assert all(row["model"] == "iter0/model" for row in reports[0]["rows"])  # not where it ran

    iterate(first, "--seeds", "1-2")  # seed 1 is done: only seed 2 runs
    sweep = json.loads((first / "report.json").read_text())
    assert sweep["seeds"] == [1, 2]
    digests = {s["seed"]: s["digest"] for s in sweep["students"]}
    assert digests[1] != digests[2]  # another seed, another initialisation
    per_seed = json.loads((first / "seed1" / "report.json").read_text())
    assert [row["seed"] for row in per_seed["rows"]] == [1]
    assert json.loads((first / "seed1" / "manifest.json").read_text())["seed"] == 1

    model = first / "seed1" / "iter0" / "model"
    view = json.loads((model / "student_view.json").read_text())
    assert (view["history_steps"], view["instruction"], view["reasons"]) == (0, False, False)
    by_hand = tmp_path / "by-hand"
    played = agentgym(
        "eval", "--env", "textcraft", "--model", str(model), "--limit", "3", "--max-rounds", "3",
        "--out", str(by_hand), timeout=300,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr[-3000:]
    run_eval = first / "seed1" / "textcraft" / "iter0" / "eval" / "episodes.jsonl"
    assert actions(by_hand / "episodes.jsonl") == actions(run_eval)

    refused = agentgym(
        "eval", "--env", "textcraft", "--model", str(model), "--limit", "1", "view.reasons=true",
        "--out", str(tmp_path / "refused"),
    )  # fmt: skip
    assert refused.returncode == 2
    assert "was trained with reasons=False, not True" in refused.stderr
    assert "--other-view" in refused.stderr and not (tmp_path / "refused").exists()
