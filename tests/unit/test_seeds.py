"""A run directory's seeds reported together: each seed's rows and comparisons, and across the
seeds each model's mean, deviation and range and each difference's mean and standard error;
a published report.json set beside a run's."""

from __future__ import annotations

import csv
import json
import statistics

import pytest

from agentcli.data.jsonl import write_records
from agentcli.errors import UsageError
from agentcli.evaluate import Metrics, write_metrics
from agentcli.iterate.runner import Manifest
from agentcli.iterate.seeds import (
    beside_published,
    read_published,
    read_sweep,
    this_machine,
    write_sweep_report,
)
from agentcli.records import Episode
from agentcli.run_layout import RunLayout, seed_run

ENV = "babyai"
# per seed: each model's successes on items 0-3
WINS = {
    0: {"0": [0, 0, 1, 0], "1": [1, 1, 1, 0], "control": [0, 1, 1, 0]},
    3: {"0": [1, 0, 0, 0], "1": [1, 1, 0, 1], "control": [1, 0, 0, 1]},
}


def seed_of_run(base, seed: int, wins: dict[str, list[int]] | None = None) -> RunLayout:
    layout = RunLayout(seed_run(base, seed))
    manifest = Manifest(layout.manifest)
    manifest.seed = seed
    for k in (0, 1):
        manifest.iterations[str(k)] = {"config": {"run": str(base), "seed": seed, "envs": [ENV]}}
    manifest.stages["iter0/train"] = {"seconds": 10.0 + seed, "load": 1.5}
    manifest.save()
    where = layout.env(ENV)
    for label, won in (wins or WINS[seed]).items():
        folder = where.control_eval(1) if label == "control" else where.eval(int(label))
        episodes = [Episode(item_id=f"{ENV}_{i}", env=ENV, instruction="", success=bool(success),
                            n_steps=0) for i, success in enumerate(won)]  # fmt: skip
        write_records(folder / "episodes.jsonl", episodes)
        rate = sum(won) / len(won)
        write_metrics([Metrics(ENV, "all", len(won), rate, rate, 1.0, 0, 0.0, 0.0)], folder,
                      {"split": "test", "model": str(layout.model(0))})  # fmt: skip
    return layout


def test_each_seed_and_the_spread_across_them(tmp_path):
    for seed in WINS:
        seed_of_run(tmp_path, seed)
    sweep = read_sweep(tmp_path)
    assert [report.seed for report in sweep.seeds] == [0, 3]
    spreads = {s.iteration: s for s in sweep.spreads}
    assert (spreads["1"].mean, spreads["1"].low, spreads["1"].high) == (0.75, 0.75, 0.75)
    assert spreads["0"].sd == pytest.approx(statistics.stdev([0.25, 0.25]))
    assert spreads["control"].mean == pytest.approx(0.5) and spreads["control"].seeds == 2
    differences = {(d.model, d.baseline): d for d in sweep.differences}
    versus_zero = differences[("1", "0")]  # seed 0: +0.5, seed 3: +0.5
    assert (versus_zero.mean, versus_zero.standard_error, versus_zero.ahead) == (0.5, 0.0, 2)
    versus_control = differences[("1", "control")]  # seed 0: +0.25, seed 3: +0.25
    assert versus_control.mean == pytest.approx(0.25)
    assert versus_control.standard_error == pytest.approx(0.0)


def test_the_files_beside_the_seeds(tmp_path):
    for seed in WINS:
        seed_of_run(tmp_path, seed)
    write_sweep_report(tmp_path)
    document = json.loads((tmp_path / "report.json").read_text())
    assert document["seeds"] == [0, 3]
    assert [(r["seed"], r["iteration"], r["control"]) for r in document["rows"]] == [
        (0, 0, False), (0, 1, False), (0, 1, True), (3, 0, False), (3, 1, False), (3, 1, True),
    ]  # fmt: skip
    assert {r["model"] for r in document["rows"]} == {"iter0/model"}  # in the run, not where
    assert {(c["seed"], c["baseline"]) for c in document["comparisons"]} == {
        (0, "0"), (0, "control"), (3, "0"), (3, "control"),
    }  # fmt: skip
    across = {(r["iteration"], r["control"]): r for r in document["across_seeds"]["rows"]}
    assert across[(1, False)]["success_mean"] == 0.75 and across[(1, True)]["seeds"] == 2
    timings = {s["seed"]: s for s in document["timings"]["seeds"]}
    assert (timings[3]["seconds"], timings[3]["load_average"]) == (13.0, 1.5)
    with (tmp_path / "report.csv").open() as file:
        lines = list(csv.DictReader(file))
    assert [line["seed"] for line in lines] == ["0", "0", "0", "3", "3", "3", "", "", ""]
    assert float(lines[-2]["success_rate"]) == 0.75 and lines[-2]["seeds"] == "2"
    assert (tmp_path / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_run_beside_a_published_report(tmp_path):
    published = tmp_path / "published"
    for seed in WINS:
        seed_of_run(published, seed)
    write_sweep_report(published)
    mine = tmp_path / "mine"
    seed_of_run(mine, 0)
    seed_of_run(tmp_path / "other", 0, {**WINS[0], "1": [1, 1, 0, 0]})
    results = read_published(published / "report.json")
    same = {b.iteration: b for b in beside_published(read_sweep(mine), results)}
    assert same["1"].published == same["1"].success_rate == 0.75
    assert (same["1"].spread.low, same["1"].spread.high, same["1"].spread.seeds) == (0.75, 0.75, 2)
    other = {b.iteration: b for b in beside_published(read_sweep(tmp_path / "other"), results)}
    assert (other["1"].success_rate, other["1"].published) == (0.5, 0.75)
    (tmp_path / "bad.json").write_text(json.dumps({"rows": []}))
    with pytest.raises(UsageError, match="is not a report.json of seeds"):
        read_published(tmp_path / "bad.json")


def test_a_directory_without_seeds_is_one_line(tmp_path):
    with pytest.raises(UsageError, match="holds no seed's run"):
        write_sweep_report(tmp_path)
    assert not (tmp_path / "report.json").exists()


def test_report_prints_each_seed_then_across_them_then_beside_the_published(tmp_path):
    from tests.support.cli import agentgym

    for seed in WINS:
        seed_of_run(tmp_path / "runs", seed)
    write_sweep_report(tmp_path / "runs")
    printed = agentgym(
        "report", str(tmp_path / "runs"), "--published", str(tmp_path / "runs" / "report.json")
    )
    assert printed.returncode == 0, printed.stderr
    out = printed.stdout
    assert out.index("seed 0") < out.index("seed 3") < out.index("across seeds")
    assert "measured on" not in out  # here, on this machine
    assert "babyai: iteration 1 − control across 2 seeds: +25.0 ± 0.0 points" in out
    assert "ahead in 2 of 2" in out
    assert (
        "iteration 1 (babyai, seed 3): 75.0%, the same as "
        f"{tmp_path / 'runs' / 'report.json'}'s seed 3; its 2 seeds 75.0–75.0%, mean 75.0%"
    ) in out
    published = str(tmp_path / "runs" / "report.json")
    one_run = agentgym("report", str(tmp_path / "runs" / "seed0"), "--published", published)
    assert one_run.returncode == 2 and "compares a run directory of seeds" in one_run.stderr


def test_each_task_type_across_the_seeds_in_the_files_and_the_printed_table(tmp_path):
    from tests.support.cli import agentgym

    picks = {0: 0.5, 3: 1.0}  # iteration 1's success on the "pick" items, per seed
    for seed, pick in picks.items():
        layout = seed_of_run(tmp_path, seed)
        rows = [
            Metrics(ENV, "all", 4, 0.75, 0.75, 1.0, 0, 0.0, 0.0),
            Metrics(ENV, "clean", 2, 1.0, 1.0, 1.0, 0, 0.0, 0.0),
            Metrics(ENV, "pick", 2, pick, pick, 1.0, 0, 0.0, 0.0),
        ]
        write_metrics(rows, layout.env(ENV).eval(1), {"split": "test", "model": "m"})
    sweep = write_sweep_report(tmp_path)
    [pick] = [s for s in sweep.task_types if s.task_type == "pick"]
    assert (pick.iteration, pick.seeds, pick.mean, pick.low, pick.high) == ("1", 2, 0.75, 0.5, 1.0)
    document = json.loads((tmp_path / "report.json").read_text())
    assert [(t["seed"], t["task_type"], t["success_rate"]) for t in document["task_types"]] == [
        (0, "clean", 1.0), (0, "pick", 0.5), (3, "clean", 1.0), (3, "pick", 1.0),
    ]  # fmt: skip
    across = {t["task_type"]: t for t in document["across_seeds"]["task_types"]}
    assert across["pick"]["success_mean"] == 0.75 and across["clean"]["success_sd"] == 0.0

    printed = agentgym("report", str(tmp_path))
    assert printed.returncode == 0, printed.stderr
    words = " ".join(printed.stdout.split())  # a long run path wraps the title over lines
    table = words[words.rindex("by task type") :]  # the last: across seeds
    assert "mean success across seeds" in table and "75.0% (35.4)" in table  # sd of 50, 100 %


def test_each_seeds_action_kinds_and_ends_are_in_the_run_directorys_report_json(tmp_path):
    for seed in WINS:
        layout = seed_of_run(tmp_path, seed)
        kinds = {"search": 2 + seed, "buy": 1}
        metrics = Metrics(ENV, "all", 4, 0.75, 0.75, 1.0, 0, 0.0, 0.0,
                          ends={"done": 3, "max_rounds": 1}, action_kinds=kinds)  # fmt: skip
        write_metrics([metrics], layout.env(ENV).eval(1), {"split": "test", "model": "m"})
    write_sweep_report(tmp_path)
    document = json.loads((tmp_path / "report.json").read_text())
    assert [(k["seed"], k["iteration"], k["action_kind"], k["steps"])
            for k in document["action_kinds"]] == [
        (0, 1, "search", 2), (0, 1, "buy", 1), (3, 1, "search", 5), (3, 1, "buy", 1),
    ]  # fmt: skip
    assert [(e["seed"], e["end"], e["items"]) for e in document["ends"]] == [
        (0, "done", 3), (0, "max_rounds", 1), (3, "done", 3), (3, "max_rounds", 1),
    ]  # fmt: skip


def test_report_says_when_the_published_results_come_from_another_kind_of_cpu(tmp_path):
    from tests.support.cli import agentgym

    for seed in WINS:
        seed_of_run(tmp_path / "runs", seed)
    write_sweep_report(tmp_path / "runs")
    document = json.loads((tmp_path / "runs" / "report.json").read_text())
    assert document["timings"]["machine"]["cpu"] == this_machine()["cpu"]
    document["timings"]["machine"]["cpu"] = "Elsewhere 9000 with AVX2"
    (tmp_path / "published.json").write_text(json.dumps(document))
    printed = agentgym(
        "report", str(tmp_path / "runs"), "--published", str(tmp_path / "published.json")
    )
    assert printed.returncode == 0, printed.stderr
    assert "measured on another kind of CPU (Elsewhere 9000 with AVX2) than this run (" in " ".join(
        printed.stdout.split()
    )


def test_one_seed_is_reported_without_a_spread_across_seeds(tmp_path):
    from tests.support.cli import agentgym

    seed_of_run(tmp_path / "runs", 0, WINS[0])
    printed = agentgym("report", str(tmp_path / "runs"))
    assert printed.returncode == 0, printed.stderr
    assert "runs seed 0" in printed.stdout
    assert "across" not in printed.stdout  # no table nor difference across one seed


def test_a_published_file_that_is_not_a_report_is_refused_before_the_report_is_written(tmp_path):
    from tests.support.cli import agentgym

    seed_of_run(tmp_path / "runs", 0, WINS[0])
    (tmp_path / "notes.md").write_text("# not a report\n")
    printed = agentgym("report", str(tmp_path / "runs"), "--published", str(tmp_path / "notes.md"))
    assert printed.returncode == 2
    assert "is not a report.json of seeds" in printed.stderr
    assert "seed 0" not in printed.stdout  # refused before any table
    assert not (tmp_path / "runs" / "report.json").exists()
