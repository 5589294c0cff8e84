"""``agentgym report``: what an ``iterate`` run achieved, per iteration and environment.

It reads the run's manifest (which iterations and environments ran, where each teacher
stage's cost ledger is), each eval's ``metrics.json`` and each training's summary; the
control (iteration 1's matched control) is a row of its own. Differences in success between
models evaluated on the same items are paired over those items, with their standard error:
at 300 items a success rate alone is ±3 points, and two models' rates share most of that
noise, which pairing removes.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.data.jsonl import read_records
from agentcli.data.records import Episode
from agentcli.errors import UsageError
from agentcli.evaluate import ALL
from agentcli.iterate.run_layout import RunLayout
from agentcli.iterate.runner import Manifest
from agentcli.iterate.stages import train_summary_path

CONTROL = "control"
PLOT_NAME = "report.png"


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

    @property
    def success_se(self) -> float:
        """The binomial standard error of ``success_rate``."""
        p = self.success_rate
        return math.sqrt(p * (1 - p) / self.episodes) if self.episodes else 0.0


@dataclass(frozen=True)
class Comparison:
    """``model`` against ``baseline`` in one env, over the items both were evaluated on."""

    env: str
    model: str  # an iteration label: "1"
    baseline: str  # "0" or "control"
    items: int
    difference: float  # mean over the items of success(model) - success(baseline)
    standard_error: float


def read_report(run: Path) -> list[Row]:
    """One row per evaluated (iteration, env); the control after iteration 1."""
    layout = RunLayout(run)
    if not layout.manifest.exists():
        raise UsageError(f"{run} has no manifest.json: is it a run of `agentgym iterate`?")
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
                    )
                )
    if not rows:
        raise UsageError(f"{run}: no iteration has been evaluated yet; run `agentgym iterate`")
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
    comparisons = []
    for model, baseline, env in pairs:
        if (baseline, env) not in labels or (model, env) not in labels:
            continue
        a, b = (_successes(layout.env(env), label) for label in (model, baseline))
        shared = sorted(a.keys() & b.keys())
        if len(shared) < 2:
            continue
        differences = [a[item] - b[item] for item in shared]
        comparisons.append(
            Comparison(
                env=env,
                model=model,
                baseline=baseline,
                items=len(shared),
                difference=statistics.fmean(differences),
                standard_error=statistics.stdev(differences) / math.sqrt(len(shared)),
            )
        )
    return comparisons


def _successes(where: RunLayout, label: str) -> dict[str, float]:
    evaluated = where.control_eval if label == CONTROL else where.eval(int(label))
    path = evaluated / "episodes.jsonl"
    episodes = read_records(path, Episode) if path.exists() else []
    return {episode.item_id: float(episode.success) for episode in episodes}


def plot_report(rows: list[Row], path: Path, *, title: str) -> None:
    """Success per iteration, one line per env; the control as a separate marker."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, no GUI toolkit
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for env in dict.fromkeys(row.env for row in rows):
        line = [
            (int(r.iteration), r.success_rate)
            for r in rows
            if r.env == env and r.iteration != CONTROL
        ]
        drawn = axes.plot([x for x, _ in line], [100 * y for _, y in line], marker="o", label=env)
        for row in rows:
            if row.env == env and row.iteration == CONTROL:
                axes.scatter(
                    [1], [100 * row.success_rate], marker="*", s=160, color=drawn[0].get_color(),
                    label=f"{env} control", zorder=3,
                )  # fmt: skip
    axes.set_xlabel("iteration")
    axes.set_ylabel("success (%)")
    axes.set_ylim(-3, 103)  # a point at 0 or 100 % stays visible
    axes.set_xticks(sorted({int(r.iteration) for r in rows if r.iteration != CONTROL}))
    axes.set_title(title)
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def _teacher_costs(manifest: Manifest, layout: RunLayout) -> dict[tuple[str, str], float]:
    """$ per (iteration label, env), from the ledgers of the teacher stages."""
    from agentcli.teacher.ledger import LedgerEntry

    costs: dict[tuple[str, str], float] = {}
    for entry in manifest.stages.values():
        if not entry.get("ledger"):
            continue
        recorded_run = Path(manifest.iterations[str(entry["iteration"])]["config"]["run"])
        ledger = layout.root / Path(entry["ledger"]).relative_to(recorded_run)
        if not ledger.exists():  # nothing was sent: the oracle, or an answer from the cache
            continue
        label = CONTROL if entry["stage"].startswith("control-") else str(entry["iteration"])
        spent = sum(line.cost_usd for line in read_records(ledger, LedgerEntry))
        costs[(label, entry["env"])] = costs.get((label, entry["env"]), 0.0) + spent
    return costs


def _overall(path: Path, env: str) -> dict[str, Any] | None:
    rows = _json(path)
    if rows is None:
        return None
    return next((row for row in rows if row["env"] == env and row["category"] == ALL), None)


def _json(path: Path) -> Any:
    return json.loads(path.read_text()) if path.exists() else None
