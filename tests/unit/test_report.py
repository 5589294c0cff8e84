"""``report`` on a run's files as iterate leaves them: eval metrics, training summaries and
teacher ledgers, found through the manifest even after the run directory was moved."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from agentcli.data.jsonl import write_records
from agentcli.errors import UsageError
from agentcli.evaluate import Metrics, write_metrics
from agentcli.iterate.report import (
    paired_comparisons,
    plot_report,
    read_report,
    report_figure,
    side_markers,
    write_report,
)
from agentcli.iterate.runner import Manifest
from agentcli.records import Episode
from agentcli.run_layout import RunLayout, seed_run
from agentcli.teacher.ledger import LedgerEntry

ENVS = ["textcraft", "babyai"]
SUCCESS = {("0", "textcraft"): 0.2, ("0", "babyai"): 0.4, ("1", "textcraft"): 0.5}
SUCCESS |= {("1", "babyai"): 0.6, ("control", "textcraft"): 0.3, ("control", "babyai"): 0.45}


def ledger_line(cost: float) -> LedgerEntry:
    return LedgerEntry(
        time="2026-01-01T00:00:00", stage="correct", item_id="x_1", model="gpt-4o-mini",
        request="0" * 16, retries=0, repair=0, outcome="ok", cost_usd=cost,
    )  # fmt: skip


def make_run(base):
    """Seed 0's run of the config whose run directory is ``base``."""
    layout = RunLayout(seed_run(base, 0))
    manifest = Manifest(layout.manifest)
    manifest.seed = 0
    for k in (0, 1):
        config = {"run": str(base), "seed": 0, "envs": ENVS, "method": "sft"}
        manifest.iterations[str(k)] = {"config": config}
        summary = {"steps": 10 * (k + 1), "global_step": 10 * (k + 1), "tokens": 1000 * (k + 1)}
        layout.model(k).mkdir(parents=True)
        (layout.model(k) / "train_summary.json").write_text(json.dumps(summary))
    layout.control_model(1).mkdir(parents=True)
    (layout.control_model(1) / "train_summary.json").write_text(json.dumps({"global_step": 20}))
    for (label, env), success in SUCCESS.items():
        where = layout.env(env)
        folder = where.control_eval(1) if label == "control" else where.eval(int(label))
        looped = round(10 * success)  # some of the episodes out of rounds, half of them stuck
        metrics = Metrics(
            env, "all", 100, success, success, 7.5, 0, 0.04, 0.05, looped=looped,
            stuck=looped // 2,
        )  # fmt: skip
        write_metrics([metrics], folder, {"split": "test", "model": f"model-{label}"})
    # teacher stages: iteration 1's corrections cost money in textcraft (two ledger lines)
    # and in the control's annotate; iteration 0's oracle annotate wrote no ledger at all
    stages = [
        (0, "annotate", "textcraft", "demos.annotated.ledger.jsonl", []),
        (1, "correct", "textcraft", "iter0/correction/ledger.jsonl", [0.25, 0.5]),
        (1, "correct", "babyai", "iter0/correction/ledger.jsonl", [0.125]),
        (1, "control-annotate", "textcraft", "control/demos.annotated.ledger.jsonl", [1.0]),
    ]
    for k, stage, env, name, costs in stages:
        ledger = layout.env(env).root / name
        if costs:
            write_records(ledger, [ledger_line(cost) for cost in costs])
        manifest.stages[f"iter{k}/{stage}/{env}"] = {
            "iteration": k, "stage": stage, "env": env, "ledger": str(ledger)
        }  # fmt: skip
    manifest.save()
    return layout


def test_a_row_per_iteration_and_env_with_the_control_after_iteration_1(tmp_path):
    moved = tmp_path / "moved"
    shutil.move(make_run(tmp_path / "run").root, moved)  # recorded paths name the old place
    rows = read_report(moved)
    assert [(row.iteration, row.env) for row in rows] == [
        ("0", "textcraft"), ("0", "babyai"), ("1", "textcraft"), ("1", "babyai"),
        ("control", "textcraft"), ("control", "babyai"),
    ]  # fmt: skip
    assert {(row.iteration, row.env): row.success_rate for row in rows} == SUCCESS
    costs = {(row.iteration, row.env): row.teacher_cost for row in rows}
    assert costs == {
        ("0", "textcraft"): 0.0, ("0", "babyai"): 0.0, ("1", "textcraft"): 0.75,
        ("1", "babyai"): 0.125, ("control", "textcraft"): 1.0, ("control", "babyai"): 0.0,
    }  # fmt: skip
    assert [row.train_steps for row in rows] == [10, 10, 20, 20, 20, 20]
    assert [row.tokens_trained for row in rows] == [1000, 1000, 2000, 2000, None, None]


def test_an_iteration_not_evaluated_yet_has_no_row(tmp_path):
    layout = make_run(tmp_path / "run")
    shutil.rmtree(layout.env("babyai").eval(1))
    rows = read_report(layout.root)
    assert ("1", "babyai") not in {(row.iteration, row.env) for row in rows}


def test_the_plot_is_a_png(tmp_path):
    layout = make_run(tmp_path / "run")
    plot_report(read_report(layout.root), tmp_path / "report.png", title="run")
    assert (tmp_path / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_run_with_nothing_evaluated_is_one_line(tmp_path):
    layout = RunLayout(tmp_path)
    manifest = Manifest(layout.manifest)
    manifest.iterations["0"] = {"config": {"run": str(tmp_path), "envs": ["textcraft"]}}
    manifest.save()
    with pytest.raises(UsageError, match="no iteration has been evaluated yet"):
        read_report(tmp_path)


def _evaluated(folder, successes):
    episodes = [
        Episode(item_id=f"babyai_{i}", env="babyai", instruction="", success=won, n_steps=0)
        for i, won in enumerate(successes)
    ]
    write_records(folder / "episodes.jsonl", episodes)


def test_differences_are_paired_over_the_items_both_models_were_evaluated_on(tmp_path):
    layout = make_run(tmp_path / "run")
    where = layout.env("babyai")
    _evaluated(where.eval(0), [0, 0, 1, 1, 0, 0])
    _evaluated(where.eval(1), [1, 1, 1, 0, 1, 0, 1])  # one more item: not compared
    _evaluated(where.control_eval(1), [0, 1, 1, 1, 0, 0])
    comparisons = paired_comparisons(layout.root, read_report(layout.root))
    found = {(c.model, c.baseline): c for c in comparisons}
    assert set(found) == {("1", "0"), ("1", "control")}  # textcraft has no episodes to pair
    versus_0 = found[("1", "0")]
    assert versus_0.env == "babyai" and versus_0.items == 6
    # differences 1, 1, 0, -1, 1, 0: mean 1/3, sample deviation 0.8165, over sqrt(6)
    assert versus_0.difference == pytest.approx(1 / 3)
    assert versus_0.standard_error == pytest.approx(0.8165 / 6**0.5, rel=1e-3)
    assert found[("1", "control")].difference == pytest.approx(1 / 6)


def test_a_later_iteration_is_compared_with_its_own_control(tmp_path):
    layout = make_run(tmp_path / "run")
    manifest = Manifest(layout.manifest)
    manifest.iterations["2"] = {"config": {"run": str(tmp_path / "run"), "envs": ["babyai"]}}
    manifest.save()
    where = layout.env("babyai")
    _evaluated(where.eval(1), [1, 1, 1, 0, 1, 0])
    _evaluated(where.control_eval(1), [0, 1, 1, 1, 0, 0])
    _evaluated(where.eval(2), [1, 1, 1, 1, 1, 0])
    _evaluated(where.control_eval(2), [1, 0, 0, 1, 1, 0])
    for folder, success in ((where.eval(2), 0.7), (where.control_eval(2), 0.55)):
        metrics = Metrics("babyai", "all", 100, success, success, 7.5, 0, 0.04, 0.05)
        write_metrics([metrics], folder, {"split": "test"})
    rows, comparisons = write_report(layout.root)
    assert [row.iteration for row in rows if row.env == "babyai"] == [
        "0",
        "1",
        "control",
        "2",
        "control2",
    ]
    found = {(c.model, c.baseline): c.difference for c in comparisons}
    assert found[("2", "control2")] == pytest.approx(2 / 6)
    assert found[("1", "control")] == pytest.approx(1 / 6)
    assert ("control2", "control") not in found  # a control is a baseline, not compared
    records = json.loads((layout.root / "report.json").read_text())["rows"]
    assert [(r["iteration"], r["control"]) for r in records if r["env"] == "babyai"] == [
        (0, False),
        (1, False),
        (1, True),
        (2, False),
        (2, True),
    ]
    with (layout.root / "report.csv").open() as file:
        line = [row for row in csv.DictReader(file) if row["iteration"] == "2"][0]
    assert float(line["vs_control_difference"]) == pytest.approx(2 / 6)


def test_the_plot_draws_every_control_as_a_star_beside_its_iteration():
    labels = ["0", "1", "control", "1:dpo", "1:rl", "2", "control2", "2:dpo"]
    assert side_markers(labels) == {
        "control": ("*", pytest.approx(1.06)), "1:dpo": ("D", pytest.approx(1.12)),
        "1:rl": ("s", pytest.approx(1.18)), "control2": ("*", pytest.approx(2.06)),
        "2:dpo": ("^", pytest.approx(2.12)),
    }  # fmt: skip


def test_the_comparisons_count_wins_losses_and_ties(tmp_path):
    layout = make_run(tmp_path / "run")
    where = layout.env("babyai")
    _evaluated(where.eval(0), [0, 0, 1, 1, 0, 0])
    _evaluated(where.eval(1), [1, 1, 1, 0, 1, 0])
    comparisons = paired_comparisons(layout.root, read_report(layout.root))
    [versus_0] = comparisons
    assert (versus_0.wins, versus_0.losses, versus_0.ties) == (3, 1, 2)
    assert versus_0.split == "test"


def test_the_report_files_hold_every_row_and_its_comparisons(tmp_path):
    layout = make_run(tmp_path / "run")
    where = layout.env("babyai")
    _evaluated(where.eval(0), [0, 0, 1, 1, 0, 0])
    _evaluated(where.eval(1), [1, 1, 1, 0, 1, 0, 1])
    _evaluated(where.control_eval(1), [0, 1, 1, 1, 0, 0])
    write_report(layout.root)

    with (layout.root / "report.csv").open() as file:
        lines = list(csv.DictReader(file))
    assert [(line["iteration"], line["control"], line["env"]) for line in lines] == [
        ("0", "False", "textcraft"), ("0", "False", "babyai"), ("1", "False", "textcraft"),
        ("1", "False", "babyai"), ("1", "True", "textcraft"), ("1", "True", "babyai"),
    ]  # fmt: skip
    first = lines[0]
    assert (first["split"], first["items"], first["model"]) == ("test", "100", "model-0")
    assert float(first["success_rate"]) == 0.2
    assert float(first["success_se"]) == pytest.approx((0.2 * 0.8 / 100) ** 0.5)
    assert float(first["score_se"]) == 0.05 and first["teacher_cost"] == "0.0"
    assert first["vs_previous_difference"] == ""  # iteration 0 is compared with nothing
    babyai_1 = lines[3]  # against iteration 0: differences 1, 1, 0, -1, 1, 0
    assert float(babyai_1["vs_previous_difference"]) == pytest.approx(1 / 3)
    assert float(babyai_1["vs_previous_standard_error"]) == pytest.approx(0.8165 / 6**0.5, 1e-3)
    assert [babyai_1[f"vs_previous_{n}"] for n in ("items", "wins", "losses", "ties")] == [
        "6", "3", "1", "2",
    ]  # fmt: skip
    # against the control: differences 1, 0, 0, -1, 1, 0
    assert float(babyai_1["vs_control_difference"]) == pytest.approx(1 / 6)
    assert [babyai_1[f"vs_control_{n}"] for n in ("wins", "losses", "ties")] == ["2", "1", "3"]
    assert lines[2]["vs_previous_difference"] == ""  # textcraft has no episodes to pair

    document = json.loads((layout.root / "report.json").read_text())
    assert [row["iteration"] for row in document["rows"]] == [0, 0, 1, 1, 1, 1]
    assert document["rows"][5] == {
        "seed": 0, "iteration": 1, "control": True, "variant": None, "env": "babyai",
        "split": "test", "method": "sft", "items": 100, "success_rate": 0.45,
        "success_se": pytest.approx((0.45 * 0.55 / 100) ** 0.5),
        "mean_score": 0.45, "score_se": 0.05, "mean_steps": 7.5, "looped": 4, "stuck": 2,
        "train_steps": 20,
        "tokens_trained": None, "teacher_cost": 0.0, "model": "model-control",
    }  # fmt: skip
    pairs = [(c["env"], c["model"], c["baseline"], c["items"]) for c in document["comparisons"]]
    assert pairs == [("babyai", "1", "0", 6), ("babyai", "1", "control", 6)]
    assert (layout.root / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_variant_is_a_row_after_its_iteration_paired_with_it_and_the_previous_one(tmp_path):
    layout = make_run(tmp_path / "run")
    manifest = Manifest(layout.manifest)
    manifest.iterations["1"]["config"]["variants"] = {"dpo": {"method": "dpo"}}
    manifest.save()
    layout.variant_model(1, "dpo").mkdir(parents=True)
    (layout.variant_model(1, "dpo") / "train_summary.json").write_text('{"global_step": 7}')
    where = layout.env("babyai")
    _evaluated(where.eval(0), [0, 0, 1, 1, 0, 0])
    _evaluated(where.eval(1), [1, 1, 1, 0, 1, 0])
    folder = where.variant_eval(1, "dpo")
    write_metrics(
        [Metrics("babyai", "all", 6, 0.5, 0.5, 7.0, 0, 0.2, 0.2)], folder, {"split": "test"}
    )
    _evaluated(folder, [1, 0, 0, 0, 1, 1])
    rows, comparisons = write_report(layout.root)

    assert [(row.iteration, row.env, row.train_steps) for row in rows][-3:] == [
        ("control", "textcraft", 20), ("control", "babyai", 20), ("1:dpo", "babyai", 7),
    ]  # fmt: skip
    found = {(c.model, c.baseline): c.difference for c in comparisons}
    # against iteration 1: 0, -1, -1, 0, 0, 1; against iteration 0: 1, 0, -1, -1, 1, 1
    assert found[("1:dpo", "1")] == pytest.approx(-1 / 6)
    assert found[("1:dpo", "0")] == pytest.approx(1 / 6)
    assert ("1:dpo", "control") not in found
    with (layout.root / "report.csv").open() as file:
        line = list(csv.DictReader(file))[6]
    assert (line["iteration"], line["control"], line["variant"]) == ("1", "False", "dpo")
    assert float(line["vs_iteration_difference"]) == pytest.approx(-1 / 6)
    assert float(line["vs_previous_difference"]) == pytest.approx(1 / 6)
    assert line["vs_control_difference"] == ""
    record = json.loads((layout.root / "report.json").read_text())["rows"][6]
    assert (record["iteration"], record["control"], record["variant"]) == (1, False, "dpo")
    assert [row.method for row in rows][-3:] == ["sft", "sft", "dpo"]  # the control learns as 1


def test_a_variant_is_paired_with_the_variants_its_versus_lists(tmp_path):
    layout = make_run(tmp_path / "run")
    manifest = Manifest(layout.manifest)
    manifest.iterations["1"]["config"]["variants"] = {
        "gigpo": {"method": "grpo", "versus": ["grpo"]}, "grpo": {"method": "grpo"},
    }  # fmt: skip
    manifest.save()
    where = layout.env("babyai")
    _evaluated(where.eval(0), [0, 0, 1, 1, 0, 0])
    _evaluated(where.eval(1), [1, 1, 1, 0, 1, 0])
    for name, successes in (("gigpo", [1, 1, 0, 1, 1, 0]), ("grpo", [1, 0, 0, 0, 1, 0])):
        folder = where.variant_eval(1, name)
        rate = sum(successes) / 6
        metrics = Metrics("babyai", "all", 6, rate, rate, 7.0, 0, 0.2, 0.2)
        write_metrics([metrics], folder, {"split": "test"})
        _evaluated(folder, successes)
    _, comparisons = write_report(layout.root)

    found = {(c.model, c.baseline): c for c in comparisons}
    assert found[("1:gigpo", "1:grpo")].difference == pytest.approx(2 / 6)
    assert (found[("1:gigpo", "1:grpo")].wins, found[("1:gigpo", "1:grpo")].losses) == (2, 0)
    assert ("1:grpo", "1:gigpo") not in found  # only the pair the config declares
    document = json.loads((layout.root / "report.json").read_text())
    assert {"model": "1:gigpo", "baseline": "1:grpo"}.items() <= document["comparisons"][-1].items()


def test_each_point_of_the_plot_has_its_standard_error_as_an_error_bar(tmp_path):
    import matplotlib.pyplot as plt

    rows = read_report(make_run(tmp_path / "run").root)
    figure = report_figure(rows, title="run")
    bars = {}
    for container in figure.axes[0].containers:  # one per line, and one per control star
        [vertical] = container.lines[2]
        bars[container.get_label()] = [
            (x, low, high) for (x, low), (_, high) in vertical.get_segments()
        ]
    plt.close(figure)
    expected = {}
    for row in rows:
        label = row.env + (" control" if row.iteration == "control" else "")
        x = 1.06 if row.iteration == "control" else int(row.iteration)  # beside iteration 1
        middle, half = 100 * row.success_rate, 100 * row.success_se
        expected.setdefault(label, []).append((x, middle - half, middle + half))
    assert bars.keys() == {"textcraft", "babyai", "textcraft control", "babyai control"}
    for label, points in expected.items():
        assert bars[label] == [pytest.approx(point) for point in points], label


TYPES = {"0": (0.25, 0.5), "1": (0.75, 1.0), "control": (0.5, 0.5)}  # per model: two types' success


def typed_run(base):
    """``make_run`` whose babyai evals also hold the per-type rows eval writes for an env whose
    spec sorts items into types: 4 items of "pick" and 2 of "clean" per model."""
    layout = make_run(base)
    for label, (pick, clean) in TYPES.items():
        where = layout.env("babyai")
        folder = where.control_eval(1) if label == "control" else where.eval(int(label))
        overall = (4 * pick + 2 * clean) / 6
        rows = [
            Metrics("babyai", "all", 6, overall, overall, 7.5, 0, 0.04, 0.05),
            Metrics("babyai", "clean", 2, clean, clean, 7.0, 0, 0.0, 0.0),
            Metrics("babyai", "pick", 4, pick, pick, 8.0, 0, 0.0, 0.0),
        ]
        write_metrics(rows, folder, {"split": "test", "model": f"model-{label}"})
    return layout


def test_a_row_carries_its_success_per_task_type_where_the_env_has_types(tmp_path):
    rows = read_report(typed_run(tmp_path / "run").root)
    typed = {(row.iteration, row.env): row.task_types for row in rows}
    assert typed[("0", "textcraft")] == ()  # textcraft's evals hold no types
    assert [(t.name, t.episodes, t.success_rate) for t in typed[("1", "babyai")]] == [
        ("clean", 2, 1.0), ("pick", 4, 0.75),
    ]  # fmt: skip
    assert typed[("control", "babyai")][1].success_se == pytest.approx((0.25 / 4) ** 0.5)


def test_the_report_files_and_plot_hold_the_task_types(tmp_path):
    layout = typed_run(tmp_path / "run")
    write_report(layout.root)

    document = json.loads((layout.root / "report.json").read_text())
    assert [(t["iteration"], t["control"], t["task_type"], t["items"], t["success_rate"])
            for t in document["task_types"]] == [
        (0, False, "clean", 2, 0.5), (0, False, "pick", 4, 0.25), (1, False, "clean", 2, 1.0),
        (1, False, "pick", 4, 0.75), (1, True, "clean", 2, 0.5), (1, True, "pick", 4, 0.5),
    ]  # fmt: skip
    assert {t["env"] for t in document["task_types"]} == {"babyai"}
    assert all(t["split"] == "test" and t["seed"] == 0 for t in document["task_types"])

    with (layout.root / "report.csv").open() as file:
        lines = list(csv.DictReader(file))
    assert [line["task_type"] for line in lines] == ["all"] * 6 + ["clean", "pick"] * 3
    control_pick = lines[-1]
    assert (control_pick["control"], control_pick["env"], control_pick["items"]) == (
        "True", "babyai", "4",
    )  # fmt: skip
    assert float(control_pick["success_rate"]) == 0.5 and control_pick["vs_control_items"] == ""

    import matplotlib.pyplot as plt

    figure = report_figure(read_report(layout.root), title="run")
    by_type = figure.axes[1]
    heights = {
        container.get_label(): [round(bar.get_height(), 6) for bar in container]
        for container in by_type.containers
        if container.get_label() in ("iteration 0", "iteration 1", "control")
    }
    assert [tick.get_text() for tick in by_type.get_xticklabels()] == ["clean", "pick"]
    plt.close(figure)
    assert heights == {"iteration 0": [50.0, 25.0], "iteration 1": [100.0, 75.0],
                       "control": [50.0, 50.0]}  # fmt: skip


def test_a_run_without_task_types_plots_one_panel(tmp_path):
    import matplotlib.pyplot as plt

    figure = report_figure(read_report(make_run(tmp_path / "run").root), title="run")
    assert len(figure.axes) == 1
    plt.close(figure)


KINDS = {
    "0": {"search": 6, "result": 2, "option": 0, "buy": 0, "navigate": 0, "invalid": 12},
    "1": {"search": 4, "result": 4, "option": 3, "buy": 3, "navigate": 1, "invalid": 5},
}
ENDS = {
    "0": {"done": 0, "max_rounds": 4, "context_exceeded": 0, "error": 0},
    "1": {"done": 3, "max_rounds": 1, "context_exceeded": 0, "error": 0},
}


def kinds_run(base):
    """``make_run`` whose textcraft evals of iterations 0 and 1 hold the counts eval writes for
    an env that sorts its actions into kinds (webshop's), 4 items each."""
    layout = make_run(base)
    for label, kinds in KINDS.items():
        metrics = Metrics("textcraft", "all", 4, 0.5, 0.5, 5.0, 0, 0.25, 0.25,
                          ends=ENDS[label], action_kinds=kinds)  # fmt: skip
        write_metrics([metrics], layout.env("textcraft").eval(int(label)), {"split": "test"})
    return layout


def test_the_report_counts_each_kind_of_step_and_how_episodes_ended(tmp_path):
    from tests.support.cli import agentgym

    layout = kinds_run(tmp_path / "run")
    rows = {(row.iteration, row.env): row for row in read_report(layout.root)}
    assert rows[("1", "textcraft")].action_kinds == KINDS["1"]
    assert rows[("1", "textcraft")].ends == ENDS["1"]
    assert rows[("control", "textcraft")].action_kinds == {}  # its metrics hold no kinds

    write_report(layout.root)
    document = json.loads((layout.root / "report.json").read_text())
    kinds = {(k["iteration"], k["action_kind"]): k for k in document["action_kinds"]}
    assert len(kinds) == 12 and {k["env"] for k in document["action_kinds"]} == {"textcraft"}
    assert (kinds[(1, "buy")]["steps"], kinds[(1, "buy")]["share"]) == (3, 0.15)
    assert kinds[(0, "invalid")]["share"] == 0.6 and kinds[(0, "invalid")]["seed"] == 0
    ends = {(e["iteration"], e["control"], e["env"], e["end"]): e for e in document["ends"]}
    assert (ends[(1, False, "textcraft", "done")]["items"],
            ends[(1, False, "textcraft", "done")]["share"]) == (3, 0.75)  # fmt: skip
    with (layout.root / "report.csv").open() as file:  # its lines stay a line per model
        assert len(list(csv.DictReader(file))) == 6

    printed = agentgym("report", str(layout.root))
    assert printed.returncode == 0, printed.stderr
    table = printed.stdout[printed.stdout.index("action kind") :]  # its title may wrap: a long path
    lines = {" ".join(line.split()[1:3]) if "ended:" in line else line.split()[1]:
             line.split()[2:] for line in table.splitlines()
             if line.strip().startswith("textcraft")}  # fmt: skip
    assert lines["buy"] == ["0", "(0%)", "3", "(15%)"]
    assert lines["invalid"] == ["12", "(60%)", "5", "(25%)"]
    assert lines["ended: done"][1:] == ["0", "(0%)", "3", "(75%)"]
    assert lines["ended: max_rounds"][1:] == ["4", "(100%)", "1", "(25%)"]
    assert "ended: error" not in table  # no model's episodes ended so
    assert "by action kind" not in agentgym("report", str(make_run(tmp_path / "plain").root)).stdout
