"""``agentgym report``: what an ``iterate`` run achieved, per iteration and environment.

It reads the run's manifest (which iterations and environments ran, where each teacher
stage's cost ledger is), each eval's ``metrics.json`` and each training's summary; the
control (iteration 1's matched control) is a row of its own. Differences in success between
models evaluated on the same items are paired over those items (``agentcli.compare``), with
their standard error. ``write_report`` puts the rows and comparisons beside the run's
manifest: ``report.csv``, ``report.json`` and the plot ``report.png``.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.common import write_atomic
from agentcli.compare import Comparison, paired
from agentcli.data.jsonl import read_records
from agentcli.errors import UsageError
from agentcli.evaluate import ALL
from agentcli.iterate.runner import Manifest
from agentcli.iterate.stages import train_summary_path
from agentcli.records import Episode
from agentcli.run_layout import RunLayout, seed_run

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CONTROL = "control"
PLOT_NAME = "report.png"
CSV_NAME = "report.csv"
JSON_NAME = "report.json"


class NotEvaluatedError(UsageError):
    """A run none of whose iterations has been evaluated: it has no report yet."""


@dataclass(frozen=True)
class Row:
    iteration: str  # "0", "1", ... or "control"
    env: str
    episodes: int
    success_rate: float
    mean_score: float
    mean_steps: float
    train_steps: int | None  # the step the iteration's model is at
    tokens_trained: int | None  # tokens its last training run went through
    teacher_cost: float  # $ spent by the iteration's teacher stages in this env
    # None where the eval's metrics.json (written by an older agentgym) does not say
    split: str | None = None
    score_se: float | None = None  # the standard error of mean_score
    model: str | None = None  # the model evaluated: its path in the run, else as metrics.json says
    seed: int | None = None  # the run's seed (None: a run made stage by stage, by hand)

    @property
    def success_se(self) -> float:
        """The binomial standard error of ``success_rate``."""
        p = self.success_rate
        return math.sqrt(p * (1 - p) / self.episodes) if self.episodes else 0.0


def read_report(run: Path) -> list[Row]:
    """One row per evaluated (iteration, env); the control after iteration 1."""
    layout = RunLayout(run)
    if not layout.manifest.exists():
        raise UsageError(
            f"{run} has no manifest.json: pass a run of `agentgym iterate`, or two eval"
            " directories to compare (agentgym report A B)"
        )
    manifest = Manifest(layout.manifest)
    envs = list(
        dict.fromkeys(
            env for record in manifest.iterations.values() for env in record["config"]["envs"]
        )
    )
    costs = _teacher_costs(manifest, layout)
    rows = []
    for k in sorted(int(key) for key in manifest.iterations):
        labels = [(str(k), k)] + ([(CONTROL, None)] if k == 1 else [])
        for label, iteration in labels:
            for env in envs:
                where = layout.env(env)
                evaluated = where.control_eval if iteration is None else where.eval(iteration)
                metrics = _overall(evaluated / "metrics.json", env)
                if metrics is None:
                    continue
                train = _json(train_summary_path(layout, iteration)) or {}
                rows.append(
                    Row(
                        iteration=label,
                        env=env,
                        episodes=metrics["episodes"],
                        success_rate=metrics["success_rate"],
                        mean_score=metrics["mean_score"],
                        mean_steps=metrics["mean_steps"],
                        train_steps=train.get("global_step"),
                        tokens_trained=train.get("tokens"),
                        teacher_cost=costs.get((label, env), 0.0),
                        split=metrics.get("split"),
                        score_se=metrics.get("score_se"),
                        model=_within(layout.root, metrics.get("model")),
                        seed=manifest.seed,
                    )
                )
    if not rows:
        raise NotEvaluatedError(
            f"{run}: no iteration has been evaluated yet; run `agentgym iterate`"
        )
    return rows


def paired_comparisons(run: Path, rows: list[Row]) -> list[Comparison]:
    """Each iteration k ≥ 1 against iteration k-1, and iteration 1 against the control."""
    layout = RunLayout(run)
    labels = {(row.iteration, row.env) for row in rows}
    pairs = [
        (row.iteration, str(int(row.iteration) - 1), row.env)
        for row in rows
        if row.iteration not in ("0", CONTROL)
    ]
    pairs += [("1", CONTROL, env) for label, env in labels if label == CONTROL]
    splits = {(row.iteration, row.env): row.split for row in rows}
    comparisons = []
    for model, baseline, env in pairs:
        if (baseline, env) not in labels or (model, env) not in labels:
            continue
        a, b = (_successes(layout.env(env), label) for label in (model, baseline))
        split = splits[(model, env)] if splits[(model, env)] == splits[(baseline, env)] else None
        comparison = paired(env, model, baseline, a, b, split=split)
        if comparison is not None:
            comparisons.append(comparison)
    return comparisons


def write_report(run: Path) -> tuple[list[Row], list[Comparison]]:
    """Read the run's report and write it beside its manifest: ``report.csv`` (a row per
    iteration and env, with its comparisons), ``report.json`` (the rows, then the
    comparisons) and ``report.png``."""
    rows = read_report(run)
    comparisons = paired_comparisons(run, rows)
    write_atomic(run / CSV_NAME, report_csv(rows, comparisons))
    document = {
        "rows": [row_record(row) for row in rows],
        "comparisons": [asdict(c) for c in comparisons],
    }
    write_atomic(run / JSON_NAME, json.dumps(document, indent=2) + "\n")
    plot_report(rows, run / PLOT_NAME, title=run.name)
    return rows, comparisons


def row_record(row: Row) -> dict[str, Any]:
    """A row as the report files hold it: the control is iteration 1's (``control`` true)."""
    return {
        "seed": row.seed,
        "iteration": 1 if row.iteration == CONTROL else int(row.iteration),
        "control": row.iteration == CONTROL,
        "env": row.env,
        "split": row.split,
        "items": row.episodes,
        "success_rate": row.success_rate,
        "success_se": row.success_se,
        "mean_score": row.mean_score,
        "score_se": row.score_se,
        "mean_steps": row.mean_steps,
        "train_steps": row.train_steps,
        "tokens_trained": row.tokens_trained,
        "teacher_cost": row.teacher_cost,
        "model": row.model,
    }


_COMPARED = ("difference", "standard_error", "items", "wins", "losses", "ties")


def report_csv(rows: list[Row], comparisons: list[Comparison]) -> str:
    """One line per row; a model's comparisons in its own line: ``vs_previous_*`` (iteration
    k against k-1) and ``vs_control_*`` (iteration 1 against the control), empty elsewhere."""
    found = {(c.model, c.baseline, c.env): c for c in comparisons}
    columns = list(row_record(rows[0])) + [
        f"vs_{against}_{name}" for against in ("previous", CONTROL) for name in _COMPARED
    ]
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        line = row_record(row)
        if row.iteration not in ("0", CONTROL):
            baselines = {"previous": str(int(row.iteration) - 1), CONTROL: CONTROL}
            for against, baseline in baselines.items():
                comparison = found.get((row.iteration, baseline, row.env))
                if comparison is not None:
                    line |= {f"vs_{against}_{n}": getattr(comparison, n) for n in _COMPARED}
        writer.writerow(line)
    return table.getvalue()


def _successes(where: RunLayout, label: str) -> dict[str, float]:
    evaluated = where.control_eval if label == CONTROL else where.eval(int(label))
    path = evaluated / "episodes.jsonl"
    episodes = read_records(path, Episode) if path.exists() else []
    return {episode.item_id: float(episode.success) for episode in episodes}


def plot_report(rows: list[Row], path: Path, *, title: str) -> None:
    """Write ``report_figure`` as a PNG."""
    import matplotlib.pyplot as plt

    figure = report_figure(rows, title=title)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def report_figure(rows: list[Row], *, title: str) -> Figure:
    """Success per iteration, one line per env, each point with its standard error as an
    error bar; the control as a separate marker."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, no GUI toolkit
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for env in dict.fromkeys(row.env for row in rows):
        line = [r for r in rows if r.env == env and r.iteration != CONTROL]
        drawn = axes.errorbar(
            [int(r.iteration) for r in line], [100 * r.success_rate for r in line],
            yerr=[100 * r.success_se for r in line], marker="o", capsize=3, label=env,
        )  # fmt: skip
        for row in rows:
            if row.env == env and row.iteration == CONTROL:
                axes.errorbar(
                    [1], [100 * row.success_rate], yerr=[100 * row.success_se], marker="*",
                    markersize=12, capsize=3, linestyle="none", color=drawn.lines[0].get_color(),
                    label=f"{env} control", zorder=3,
                )  # fmt: skip
    axes.set_xlabel("iteration")
    axes.set_ylabel("success (%, ± standard error)")
    axes.set_ylim(-3, 103)  # a point at 0 or 100 % stays visible
    axes.set_xticks(sorted({int(r.iteration) for r in rows if r.iteration != CONTROL}))
    axes.set_title(title)
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    return figure


def _teacher_costs(manifest: Manifest, layout: RunLayout) -> dict[tuple[str, str], float]:
    """$ per (iteration label, env), from the ledgers of the teacher stages."""
    from agentcli.teacher.ledger import LedgerEntry

    costs: dict[tuple[str, str], float] = {}
    for entry in manifest.stages.values():
        if not entry.get("ledger"):
            continue
        config = manifest.iterations[str(entry["iteration"])]["config"]
        recorded_run = seed_run(Path(config["run"]), config["seed"])
        ledger = layout.root / Path(entry["ledger"]).relative_to(recorded_run)
        if not ledger.exists():  # nothing was sent: the oracle, or an answer from the cache
            continue
        label = CONTROL if entry["stage"].startswith("control-") else str(entry["iteration"])
        spent = sum(line.cost_usd for line in read_records(ledger, LedgerEntry))
        costs[(label, entry["env"])] = costs.get((label, entry["env"]), 0.0) + spent
    return costs


def _within(root: Path, model: str | None) -> str | None:
    """``model``'s path relative to the run ``root`` when it lies there, so that a report
    does not depend on where the run directory is."""
    if model is None:
        return None
    try:
        return Path(model).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return model


def _overall(path: Path, env: str) -> dict[str, Any] | None:
    rows = _json(path)
    if rows is None:
        return None
    return next((row for row in rows if row["env"] == env and row["category"] == ALL), None)


def _json(path: Path) -> Any:
    return json.loads(path.read_text()) if path.exists() else None
