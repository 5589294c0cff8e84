"""A run directory's seeds reported together: what a result is, since one seed of a small
model is not one.

``agentgym iterate --seeds A-B`` runs one config once per seed, each in its own run
(``<run>/seed<N>``, see ``agentcli.run_layout``). ``write_sweep_report`` reads each seed's report
(``agentcli.iterate.report``) and writes, beside the seeds' folders, ``report.json``: every
seed's rows and paired comparisons (each with its ``seed``; so are its task types, kinds of
action and ends), then across the seeds each model's success (mean, sample deviation, min and
max) and each comparison's difference (mean, its standard error across the seeds, min, max,
and the seeds where the model came out ahead),
then ``timings`` (each seed's stage times and the machine's load: the only part that differs
when the same seeds run again). ``report.csv`` holds the same rows, and ``report.png`` draws
each seed and their mean.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import platform
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.common import write_atomic
from agentcli.compare import Comparison
from agentcli.errors import UsageError
from agentcli.iterate.report import (
    CSV_NAME,
    JSON_NAME,
    PLOT_NAME,
    NotEvaluatedError,
    Row,
    TypeBar,
    action_kind_records,
    draw_task_types,
    end_records,
    is_iteration,
    label_iteration,
    label_variant,
    model_label,
    paired_comparisons,
    read_report,
    record_label,
    row_record,
    side_markers,
    task_type_records,
    type_label,
)
from agentcli.iterate.runner import Manifest
from agentcli.run_layout import RunLayout, control_iteration, seed_run, seeds_of

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@dataclass(frozen=True)
class SeedReport:
    seed: int
    rows: list[Row]
    comparisons: list[Comparison]


@dataclass(frozen=True)
class Spread:
    """One model's success in one env across seeds."""

    iteration: str  # the model's label: "0", "1", ..., "control", "control2", "1:dpo"
    env: str
    seeds: int
    mean: float
    sd: float | None  # the sample deviation across seeds; None for one seed
    low: float
    high: float
    task_type: str | None = None  # None: over all the env's items


@dataclass(frozen=True)
class Difference:
    """One paired comparison across seeds: the per-seed differences' mean and its standard
    error (their sample deviation over √seeds)."""

    env: str
    model: str
    baseline: str
    seeds: int
    mean: float
    standard_error: float | None  # None for one seed
    low: float
    high: float
    ahead: int  # seeds where the model's difference is above 0


@dataclass(frozen=True)
class Sweep:
    run: Path
    seeds: list[SeedReport]
    spreads: list[Spread]
    differences: list[Difference]
    task_types: list[Spread]  # each model's success per task type, where the env has types


def read_sweep(run: Path) -> Sweep:
    """Each seed's report and the spreads across them; refused when ``run`` holds no seed's
    run that has been evaluated."""
    seeds = seeds_of(run)
    if not seeds:
        raise UsageError(
            f"{run} holds no seed's run (seed<N>/manifest.json): pass a run directory of"
            " `agentgym iterate`, or two eval directories to compare (agentgym report A B)"
        )
    reports = []
    for seed in seeds:
        root = seed_run(run, seed)
        try:
            rows = read_report(root)
        except NotEvaluatedError:  # it joins the sweep once it is evaluated
            continue
        reports.append(SeedReport(seed, rows, paired_comparisons(root, rows)))
    if not reports:
        raise UsageError(f"{run}: no seed has been evaluated yet; run `agentgym iterate`")
    return Sweep(
        run, reports, _spreads(reports), _differences(reports), _task_type_spreads(reports)
    )


def write_sweep_report(run: Path) -> Sweep:
    """``read_sweep`` written beside the seeds' runs: ``report.json``, ``report.csv`` and
    ``report.png``."""
    sweep = read_sweep(run)
    write_atomic(run / JSON_NAME, json.dumps(sweep_document(sweep), indent=2) + "\n")
    write_atomic(run / CSV_NAME, sweep_csv(sweep))
    plot_sweep(sweep, run / PLOT_NAME)
    return sweep


def sweep_document(sweep: Sweep) -> dict[str, Any]:
    """``report.json`` of a run directory: the same seeds' results give the same document but
    for ``timings``."""
    return {
        "seeds": [report.seed for report in sweep.seeds],
        "rows": [row_record(row) for report in sweep.seeds for row in report.rows],
        "comparisons": [
            {"seed": report.seed, **asdict(c)} for report in sweep.seeds for c in report.comparisons
        ],
        "task_types": [
            record for report in sweep.seeds for record in task_type_records(report.rows)
        ],
        "action_kinds": [
            record for report in sweep.seeds for record in action_kind_records(report.rows)
        ],
        "ends": [record for report in sweep.seeds for record in end_records(report.rows)],
        "students": _students(sweep),
        "across_seeds": {
            "rows": [_spread_record(spread) for spread in sweep.spreads],
            "comparisons": [asdict(difference) for difference in sweep.differences],
            "task_types": [
                {**_spread_record(spread), "task_type": spread.task_type}
                for spread in sweep.task_types
            ],
        },
        "timings": _timings(sweep),
    }


def sweep_csv(sweep: Sweep) -> str:
    """A line per seed, model and env, then one per model and env across the seeds
    (``seed`` empty, ``seeds`` the count), with the mean success and its spread."""
    columns = ["seed", "iteration", "control", "variant", "env", "items", "success_rate"]
    columns += ["success_se"]
    columns += ["seeds", "success_sd", "success_min", "success_max"]
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for report in sweep.seeds:
        for row in report.rows:
            writer.writerow(row_record(row))
    for spread in sweep.spreads:
        record = _spread_record(spread)
        writer.writerow({**record, "success_rate": record["success_mean"]})
    return table.getvalue()


def _spread_record(spread: Spread) -> dict[str, Any]:
    return {
        "iteration": label_iteration(spread.iteration),
        "control": control_iteration(spread.iteration) is not None,
        "variant": label_variant(spread.iteration),
        "env": spread.env,
        "seeds": spread.seeds,
        "success_mean": spread.mean,
        "success_sd": spread.sd,
        "success_min": spread.low,
        "success_max": spread.high,
    }


def _spreads(reports: Sequence[SeedReport]) -> list[Spread]:
    found: dict[tuple[str, str, str | None], list[float]] = {}
    for report in reports:
        for row in report.rows:
            found.setdefault((row.iteration, row.env, None), []).append(row.success_rate)
    return _spread_of(found)


def _task_type_spreads(reports: Sequence[SeedReport]) -> list[Spread]:
    found: dict[tuple[str, str, str | None], list[float]] = {}
    for report in reports:
        for row in report.rows:
            for task_type in row.task_types:
                key = (row.iteration, row.env, task_type.name)
                found.setdefault(key, []).append(task_type.success_rate)
    return _spread_of(found)


def _spread_of(found: dict[tuple[str, str, str | None], list[float]]) -> list[Spread]:
    return [
        Spread(iteration, env, len(values), statistics.fmean(values), _sd(values),
               min(values), max(values), task_type)
        for (iteration, env, task_type), values in found.items()
    ]  # fmt: skip


def _differences(reports: Sequence[SeedReport]) -> list[Difference]:
    found: dict[tuple[str, str, str], list[float]] = {}
    for report in reports:
        for c in report.comparisons:
            found.setdefault((c.env, c.model, c.baseline), []).append(c.difference)
    differences = []
    for (env, model, baseline), values in found.items():
        sd = _sd(values)
        se = None if sd is None else sd / math.sqrt(len(values))
        differences.append(
            Difference(env, model, baseline, len(values), statistics.fmean(values), se,
                       min(values), max(values), sum(value > 0 for value in values))
        )  # fmt: skip
    return differences


def _sd(values: Sequence[float]) -> float | None:
    return statistics.stdev(values) if len(values) > 1 else None


def _students(sweep: Sweep) -> list[dict[str, Any]]:
    """The digest of each student a seed's run built (``model: {tiny: …}``): the same config
    and seed build the same student, so a test can tell when the student a published result
    was measured with has changed."""
    from agentcli.models import model_digest

    students = []
    for report in sweep.seeds:
        student = RunLayout(seed_run(sweep.run, report.seed)).student
        if (student / "config.json").is_file():
            students.append({"seed": report.seed, "digest": model_digest(student)})
    return students


def _timings(sweep: Sweep) -> dict[str, Any]:
    """Where and how long: the machine, and each seed's seconds per stage with the load
    average the stages ended at (what ``Manifest`` records)."""
    seeds = []
    for report in sweep.seeds:
        manifest = Manifest(RunLayout(seed_run(sweep.run, report.seed)).manifest)
        stages = {key: entry["seconds"] for key, entry in manifest.stages.items()}
        loads = [entry["load"] for entry in manifest.stages.values() if entry.get("load")]
        seeds.append(
            {
                "seed": report.seed,
                "seconds": round(sum(stages.values()), 1),
                "load_average": round(statistics.fmean(loads), 2) if loads else None,
                "stages": stages,
            }
        )
    return {"machine": this_machine(), "seeds": seeds}


def this_machine() -> dict[str, Any]:
    """Where a sweep ran: its CPU cores, the CPU and the platform. Training's floating-point
    sums follow the CPU's kernels: a seed gives the same numbers on the same kind of CPU, and
    may give others on another."""
    return {"cpus": os.cpu_count(), "cpu": _cpu(), "platform": platform.platform()}


def _cpu() -> str:
    """The CPU's model name and its widest vector instructions, as Linux lists them."""
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return platform.processor() or "unknown"
    fields = dict(line.split(":", 1) for line in info if ":" in line)
    fields = {key.strip(): value.strip() for key, value in fields.items()}
    flags = set(fields.get("flags", "").split())
    widest = next((name for flag, name in _VECTORS if flag in flags), None)
    model = fields.get("model name", platform.processor() or "unknown")
    return f"{model} with {widest}" if widest else model


_VECTORS = (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("avx", "AVX"), ("asimd", "NEON"))


def plot_sweep(sweep: Sweep, path: Path) -> None:
    """Write ``sweep_figure`` as a PNG."""
    import matplotlib.pyplot as plt

    figure = sweep_figure(sweep)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def sweep_figure(sweep: Sweep) -> Figure:
    """Success per iteration, one colour per env: each seed a faint line (the control and the
    variants faint markers), their mean a bold one with the sample deviation across seeds as
    error bars."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, no GUI toolkit
    import matplotlib.pyplot as plt

    typed_envs = {spread.env for spread in sweep.task_types}
    bars = [
        TypeBar(model_label(spread.iteration), type_label(spread.env, spread.task_type, typed_envs),
                spread.mean, spread.sd or 0.0)
        for spread in sweep.task_types
    ]  # fmt: skip
    figure, panels = plt.subplots(1, 2 if bars else 1, figsize=(12 if bars else 6, 4.5))
    axes = panels[0] if bars else panels
    envs = list(dict.fromkeys(s.env for s in sweep.spreads))
    markers = side_markers(s.iteration for s in sweep.spreads)
    for env in envs:
        line = [s for s in sweep.spreads if s.env == env and is_iteration(s.iteration)]
        drawn = axes.errorbar(
            [int(s.iteration) for s in line], [100 * s.mean for s in line],
            yerr=[100 * (s.sd or 0.0) for s in line], marker="o", capsize=3, linewidth=2,
            label=f"{env} (mean of {max(s.seeds for s in line)} seeds)",
        )  # fmt: skip
        colour = drawn.lines[0].get_color()
        for report in sweep.seeds:
            rows = [r for r in report.rows if r.env == env and is_iteration(r.iteration)]
            axes.plot([int(r.iteration) for r in rows], [100 * r.success_rate for r in rows],
                      color=colour, alpha=0.3, linewidth=1)  # fmt: skip
            for row in report.rows:
                if row.env == env and row.iteration in markers:
                    marker, x = markers[row.iteration]
                    axes.plot([x], [100 * row.success_rate], marker=marker, color=colour,
                              alpha=0.3, linestyle="none")  # fmt: skip
        for spread in sweep.spreads:
            if spread.env == env and spread.iteration in markers:
                marker, x = markers[spread.iteration]
                axes.errorbar(
                    [x], [100 * spread.mean], yerr=[100 * (spread.sd or 0.0)], marker=marker,
                    markersize=10, capsize=3, linestyle="none", color=colour,
                    label=f"{env} {model_label(spread.iteration)}", zorder=3,
                )  # fmt: skip
    axes.set_xlabel("iteration")
    axes.set_ylabel("success (%): seeds, their mean ± sd")
    axes.set_ylim(-3, 103)
    axes.set_xticks(sorted({label_iteration(s.iteration) for s in sweep.spreads}))
    axes.set_title(f"{sweep.run.name}: seeds {', '.join(str(r.seed) for r in sweep.seeds)}")
    axes.grid(alpha=0.3)
    axes.legend()
    if bars:
        draw_task_types(panels[1], bars, error="mean of the seeds ± sd")
    figure.tight_layout()
    return figure


@dataclass(frozen=True)
class Beside:
    """One model of a run beside a published result (a ``report.json`` of seeds)."""

    iteration: str
    env: str
    seed: int
    success_rate: float  # this run's
    published: float | None  # the published result's for the same seed; None: it has none
    spread: Spread | None  # the published result's across its seeds; None: no such model


@dataclass(frozen=True)
class Published:
    """A published ``report.json`` of seeds, as a run is set beside it."""

    path: Path
    success: dict[tuple[str, str, int], float]  # (model, env, seed) → success rate
    spreads: dict[tuple[str, str], Spread]  # (model, env) → across its seeds
    cpu: str | None  # the kind of CPU it was measured on; None: it does not say


def read_published(path: Path) -> Published:
    """The results at ``path``, a ``report.json`` that ``write_sweep_report`` wrote; refused
    in one line if it is not one."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        success = {
            (record_label(row), row["env"], row["seed"]): row["success_rate"]
            for row in document["rows"]
        }
        spreads = {
            (record_label(row), row["env"]): Spread(
                record_label(row),
                row["env"],
                row["seeds"],
                row["success_mean"],
                row["success_sd"],
                row["success_min"],
                row["success_max"],
            )  # fmt: skip
            for row in document["across_seeds"]["rows"]
        }
        cpu = document.get("timings", {}).get("machine", {}).get("cpu")
    except (ValueError, KeyError, TypeError, AttributeError):
        raise UsageError(
            f"{path} is not a report.json of seeds (`agentgym report runs/<name>` writes one"
            " beside a run directory's seed<N> folders)"
        ) from None
    return Published(path, success, spreads, cpu)


def beside_published(sweep: Sweep, published: Published) -> list[Beside]:
    """Each of ``sweep``'s models beside the ``published`` results: the same seed's success
    there and the range of its seeds."""
    return [
        Beside(row.iteration, row.env, report.seed, row.success_rate,
               published.success.get((row.iteration, row.env, report.seed)),
               published.spreads.get((row.iteration, row.env)))
        for report in sweep.seeds
        for row in report.rows
    ]  # fmt: skip


def other_machine_note(published: Published) -> str | None:
    """A line saying that the ``published`` results were measured on another kind of CPU
    than this one; None when on the same kind."""
    theirs, ours = published.cpu, this_machine()["cpu"]
    if theirs == ours:
        return None
    return (
        f"{published.path} was measured on another kind of CPU"
        f" ({theirs or 'it does not say which'}) than this run ({ours}): a seed gives the same"
        " numbers on the same kind; on another, training's floating-point sums differ, and the"
        " models trained after iteration 0 can differ by a few points"
    )
