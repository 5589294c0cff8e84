"""The whole loop on the tiny model: two iterations and the control of a reduced quickstart
(tests/fixtures/iterate-tiny.yaml), killed with SIGKILL in the middle of iteration 1's
training, then rerun: it finishes without redoing any earlier stage, whose files stay
byte-identical, and writes the run's report, which ``report`` prints. A variant added to
iteration 1 afterwards runs alone and joins the report; iteration 2's control continues
iteration 1's."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.processes import stop_group

FIXTURE = Path(__file__).parents[1] / "fixtures" / "iterate-tiny.yaml"
STAGES = [
    "iter0/collect/textcraft", "iter0/annotate/textcraft", "iter0/build-data", "iter0/train",
    "iter0/eval/textcraft", "iter1/rollout/textcraft", "iter1/correct/textcraft",
    "iter1/build-data", "iter1/train", "iter1/eval/textcraft",
    "iter1/control-collect/textcraft", "iter1/control-annotate/textcraft",
    "iter1/control-build-data", "iter1/control-train", "iter1/control-eval/textcraft",
]  # fmt: skip


def agentgym(*args: str, **options) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "agentcli.cli.main", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        start_new_session=True,  # one signal reaches the command and everything it started
        **options,
    )


def stages(run: Path) -> dict:
    path = run / "manifest.json"
    return json.loads(path.read_text())["stages"] if path.exists() else {}


def file_hashes(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def kill_during_iteration_one_training(process: subprocess.Popen, run: Path) -> None:
    """SIGKILL once the manifest says iteration 1 trains and a whole checkpoint is saved."""
    checkpoints = run / "iter1" / "model" / "checkpoints"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        training = stages(run).get("iter1/train", {}).get("status") == "running"
        if training and any(checkpoints.glob("checkpoint-*/trainer_state.json")):
            stop_group(process)
            return
        time.sleep(0.02)
    _, stderr = process.communicate()
    pytest.fail(f"iteration 1's training was never caught running:\n{stderr[-3000:]}")


@pytest.mark.slow
def test_iterate_survives_a_kill_during_training_and_report_draws_it(tiny_model, tmp_path):
    runs = tmp_path / "runs" / "tiny"
    run = runs / "seed0"  # the config's seed
    command = ("iterate", "--config", str(FIXTURE), "--iters", "0-1", f"run={runs}")
    command += (f"model={tiny_model}",)

    kill_during_iteration_one_training(agentgym(*command), run)
    before = stages(run)
    assert before["iter1/train"]["status"] == "running"
    finished = [key for key in STAGES if before[key]["status"] == "done"]
    assert finished == STAGES[: STAGES.index("iter1/train")]
    # everything but the interrupted training and the files iterate itself keeps
    own = ("manifest.json", ".lock", "report.csv", "report.json", "report.png")
    kept = {
        name: digest
        for name, digest in file_hashes(run).items()
        if not name.startswith("iter1/model/") and name not in own
    }
    assert (run / "report.csv").is_file()  # written when iteration 0 ended

    rerun = agentgym(*command)
    stdout, stderr = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, stderr[-3000:]
    assert "iteration 0: 0 stages run, 5 skipped" in stdout
    assert "iteration 1: 7 stages run, 3 skipped" in stdout
    assert f"report → {runs / 'report.csv'}, " in stdout  # across its seeds: seed 0
    written = json.loads((run / "report.json").read_text())
    assert [(r["iteration"], r["control"]) for r in written["rows"]] == [
        (0, False), (1, False), (1, True),
    ]  # fmt: skip

    after = stages(run)
    assert list(after) == STAGES  # the manifest records every stage, in order
    assert all(entry["status"] == "done" for entry in after.values())
    for key in finished:
        assert after[key] == before[key], key  # not run again: same record, same timings
    assert after["iter1/train"]["attempts"] == 2
    hashes = file_hashes(run)
    assert {name: hashes.get(name) for name in kept} == kept
    # the second attempt resumed from the checkpoint instead of starting over
    summary = json.loads((run / "iter1" / "model" / "train_summary.json").read_text())
    assert summary["global_step"] > summary["steps"] >= 1

    report = agentgym("report", str(run))
    stdout, stderr = report.communicate(timeout=120)
    assert report.returncode == 0, stderr
    lines = [line.split() for line in stdout.splitlines()]
    assert [line[:3] for line in lines if line[:1] in (["0"], ["1"], ["control"])] == [
        ["0", "textcraft", "3"],
        ["1", "textcraft", "3"],
        ["control", "textcraft", "3"],
    ]
    for baseline in ("iteration 0", "control"):
        assert f"textcraft: iteration 1 − {baseline}: " in stdout
    assert stdout.count("(paired over 3 items: ") == 2
    assert (run / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # a variant added to the finished run: its stages run, on iteration 1's corrections and
    # items, and nothing that ran is redone
    variant = agentgym(*command, "iterations.1.variants={dpo: {method: dpo}}")
    stdout, stderr = variant.communicate(timeout=300)
    assert variant.returncode == 0, stderr[-3000:]
    assert "iteration 1: 3 stages run, 10 skipped" in stdout
    assert "dpo textcraft: success" in stdout
    assert list(stages(run)) == [*STAGES, "iter1/dpo-build-data", "iter1/dpo-train",
                                 "iter1/dpo-eval/textcraft"]  # fmt: skip
    assert all(stages(run)[key] == after[key] for key in STAGES)
    report = agentgym("report", str(run))
    stdout, stderr = report.communicate(timeout=120)
    assert report.returncode == 0, stderr
    assert "textcraft: iteration 1 dpo − iteration 1: " in stdout
    assert "textcraft: iteration 1 dpo − iteration 0: " in stdout
    written = json.loads((run / "report.json").read_text())
    assert [(r["iteration"], r["variant"]) for r in written["rows"]][-1] == (1, "dpo")

    # iteration 2, and its control continued from iteration 1's on the expert's states
    second = agentgym("iterate", "--config", str(FIXTURE), "--iter", "2", *command[5:])
    stdout, stderr = second.communicate(timeout=300)
    assert second.returncode == 0, stderr[-3000:]
    assert "iteration 2: 10 stages run, 0 skipped" in stdout and "; control textcraft: " in stdout
    control = stages(run)["iter2/control-train"]["config"]
    assert (control["model"], control["out"]) == (str(run / "control" / "model"),
                                                  str(run / "control2" / "model"))  # fmt: skip
    report = agentgym("report", str(run))
    stdout, stderr = report.communicate(timeout=120)
    assert report.returncode == 0, stderr
    assert "textcraft: iteration 2 − control2: " in stdout
    written = json.loads((run / "report.json").read_text())
    assert [(r["iteration"], r["control"]) for r in written["rows"]][-2:] == [(2, False), (2, True)]
