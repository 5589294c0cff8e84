"""``agentgym report``: what an ``iterate`` run achieved, per iteration and environment.

It reads the run's manifest (which iterations and environments ran, where each teacher
stage's cost ledger is), each eval's ``metrics.json`` and each training's summary; the
matched control of an iteration and each of its variants are rows of their own, labelled
``control`` (iteration 1's; ``control<k>`` for iteration k's) and ``<k>:<name>`` beside the
iterations' ``0``, ``1``, ...
Differences in success between models evaluated on the same items are paired over those
items (``agentcli.compare``), with their standard error. ``write_report`` puts the rows and
comparisons beside the run's manifest: ``report.csv``, ``report.json`` and the plot
``report.png``.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.common import write_atomic
from agentcli.compare import Comparison, Outcome, outcomes, paired
from agentcli.data.jsonl import read_records
from agentcli.errors import UsageError
from agentcli.evaluate import ALL
from agentcli.iterate.runner import Manifest
from agentcli.records import Episode
from agentcli.run_layout import (
    CONTROL,
    RunLayout,
    control_iteration,
    control_label,
    is_control_stage,
    seed_run,
)
from agentcli.train.config import SUMMARY_NAME

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLOT_NAME = "report.png"
CSV_NAME = "report.csv"
JSON_NAME = "report.json"


class NotEvaluatedError(UsageError):
    """A run none of whose iterations has been evaluated: it has no report yet."""


@dataclass(frozen=True)
class Row:
    iteration: str  # a model's label: "0", "1", ..., "control", "control2", "1:dpo"
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
    method: str | None = None  # how the model was trained: bc, sft, dpo, grpo (None: unknown)
    # success per task type, where the env sorts its items into types (``EnvSpec.categories``:
    # alfworld's six, sciworld's tasks, babyai's levels); empty where it does not
    task_types: tuple[TaskType, ...] = ()
    # steps per kind of action, where the env sorts its actions (``EnvSpec.action_kinds``:
    # webshop's search, result, option, buy, navigate, invalid); episodes per end reason
    # (done, max_rounds, ...); both empty where the eval's metrics.json does not say
    action_kinds: dict[str, int] = field(default_factory=dict)
    ends: dict[str, int] = field(default_factory=dict)
    # episodes out of rounds in a loop, and those repeating an action that changed nothing
    # (``evaluate.loop_period``); None where the eval's metrics.json does not say
    looped: int | None = None
    stuck: int | None = None

    @property
    def success_se(self) -> float:
        """The binomial standard error of ``success_rate``."""
        return binomial_se(self.success_rate, self.episodes)


@dataclass(frozen=True)
class TaskType:
    """One model's results on the items of one task type, as its eval's metrics.json has them."""

    name: str
    episodes: int
    success_rate: float
    mean_score: float

    @property
    def success_se(self) -> float:
        return binomial_se(self.success_rate, self.episodes)


def binomial_se(rate: float, count: int) -> float:
    """The standard error of a success rate over ``count`` items: √(p(1-p)/n)."""
    return math.sqrt(rate * (1 - rate) / count) if count else 0.0


def variant_label(k: int, name: str) -> str:
    """Variant ``name`` of iteration k's label: ``1:dpo``."""
    return f"{k}:{name}"


def label_iteration(label: str) -> int:
    """The iteration a model belongs to: iteration k's control and variants to k."""
    k = control_iteration(label)
    return int(label.partition(":")[0]) if k is None else k


def label_variant(label: str) -> str | None:
    """A variant's name (``dpo`` of ``1:dpo``); None for an iteration's model and a control."""
    return label.partition(":")[2] or None


def record_label(record: dict[str, Any]) -> str:
    """The label of the model a report file's record is of (its ``iteration``, ``control``
    and ``variant``; a file written before variants has no ``variant``)."""
    if record["control"]:
        return control_label(record["iteration"])
    variant = record.get("variant")
    return variant_label(record["iteration"], variant) if variant else str(record["iteration"])


def is_iteration(label: str) -> bool:
    """An iteration's own model (one of the line of models each iteration continues)."""
    return label.isdigit()


def read_report(run: Path) -> list[Row]:
    """One row per evaluated (model, env): each iteration's, then its control, then its
    variants."""
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
        config = manifest.iterations[str(k)]["config"]
        method = config.get("method")  # the control learns as its iteration does
        methods = {str(k): method, **({control_label(k): method} if k >= 1 else {})}
        for name, settings in (config.get("variants") or {}).items():
            methods[variant_label(k, name)] = settings.get("method", method)
        for label, method in methods.items():
            for env in envs:
                metrics_rows = _json(eval_dir(layout.env(env), label) / "metrics.json") or []
                metrics = next(
                    (r for r in metrics_rows if r["env"] == env and r["category"] == ALL), None
                )
                if metrics is None:
                    continue
                train = _json(model_dir(layout, label) / SUMMARY_NAME) or {}
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
                        method=method,
                        task_types=_task_types(metrics_rows, env),
                        action_kinds=metrics.get("action_kinds") or {},
                        ends=metrics.get("ends") or {},
                        looped=metrics.get("looped"),
                        stuck=metrics.get("stuck"),
                    )
                )
    if not rows:
        raise NotEvaluatedError(
            f"{run}: no iteration has been evaluated yet; run `agentgym iterate`"
        )
    return rows


def baselines(label: str) -> dict[str, str]:
    """What a model is compared with, by the name of the comparison: ``previous``, iteration
    k-1 (for iteration k ≥ 1 and its variants); ``iteration``, the iteration's own model (for a
    variant); ``control``, the iteration's matched control (for iteration k ≥ 1)."""
    k = label_iteration(label)
    if control_iteration(label) is not None:
        return {}
    found = {"previous": str(k - 1)} if k >= 1 else {}
    if label_variant(label):
        found["iteration"] = str(k)
    elif k >= 1:
        found[CONTROL] = control_label(k)
    return found


def declared_pairs(manifest: Manifest) -> list[tuple[str, str]]:
    """The (variant, variant) pairs the run's configs ask for: each variant against the others
    of its iteration its ``versus`` lists (read from the configs as the manifest keeps them, as
    the variants' methods are: importing the config's module would triple this one's imports)."""
    return [
        (variant_label(int(k), name), variant_label(int(k), other))
        for k, record in manifest.iterations.items()
        for name, settings in (record["config"].get("variants") or {}).items()
        for other in settings.get("versus", [])
    ]


def paired_comparisons(run: Path, rows: list[Row]) -> list[Comparison]:
    """Each model against its ``baselines``, then the pairs the configs declare
    (``declared_pairs``), over the items both played."""
    layout = RunLayout(run)
    labels = {(row.iteration, row.env) for row in rows}
    pairs = [
        (row.iteration, baseline, row.env)
        for row in rows
        for baseline in baselines(row.iteration).values()
    ]
    pairs += [
        (model, baseline, row.env)
        for model, baseline in declared_pairs(Manifest(layout.manifest))
        for row in rows
        if row.iteration == model
    ]
    splits = {(row.iteration, row.env): row.split for row in rows}
    comparisons = []
    for model, baseline, env in pairs:
        if (baseline, env) not in labels or (model, env) not in labels:
            continue
        a, b = (_outcomes(layout.env(env), label) for label in (model, baseline))
        split = splits[(model, env)] if splits[(model, env)] == splits[(baseline, env)] else None
        comparison = paired(env, model, baseline, a, b, split=split)
        if comparison is not None:
            comparisons.append(comparison)
    return comparisons


def write_report(run: Path) -> tuple[list[Row], list[Comparison]]:
    """Read the run's report and write it beside its manifest: ``report.csv`` (a row per
    iteration and env, with its comparisons), ``report.json`` (the rows, the comparisons,
    then each row's task types, kinds of action and ends) and ``report.png``."""
    rows = read_report(run)
    comparisons = paired_comparisons(run, rows)
    write_atomic(run / CSV_NAME, report_csv(rows, comparisons))
    document = {
        "rows": [row_record(row) for row in rows],
        "comparisons": [asdict(c) for c in comparisons],
        "task_types": task_type_records(rows),
        "action_kinds": action_kind_records(rows),
        "ends": end_records(rows),
    }
    write_atomic(run / JSON_NAME, json.dumps(document, indent=2) + "\n")
    plot_report(rows, run / PLOT_NAME, title=run.name)
    return rows, comparisons


def row_record(row: Row) -> dict[str, Any]:
    """A row as the report files hold it: a control is its iteration's (``control`` true)."""
    return {
        **_model_record(row),
        "method": row.method,
        "items": row.episodes,
        "success_rate": row.success_rate,
        "success_se": row.success_se,
        "mean_score": row.mean_score,
        "score_se": row.score_se,
        "mean_steps": row.mean_steps,
        "looped": row.looped,
        "stuck": row.stuck,
        "train_steps": row.train_steps,
        "tokens_trained": row.tokens_trained,
        "teacher_cost": row.teacher_cost,
        "model": row.model,
    }


def task_type_records(rows: list[Row]) -> list[dict[str, Any]]:
    """Each row's success per task type, a record per model, env and type, keyed as the rows."""
    return [
        {
            **_model_record(row),
            "task_type": task_type.name,
            "items": task_type.episodes,
            "success_rate": task_type.success_rate,
            "success_se": task_type.success_se,
            "mean_score": task_type.mean_score,
        }
        for row in rows
        for task_type in row.task_types
    ]


def action_kind_records(rows: list[Row]) -> list[dict[str, Any]]:
    """Each row's steps of each kind of action (and their share of its steps), a record per
    model, env and kind, keyed as the rows; none for an env that sorts no actions."""
    return [
        {**_model_record(row), "action_kind": kind, "steps": steps,
         "share": steps / total if (total := sum(row.action_kinds.values())) else 0.0}
        for row in rows
        for kind, steps in row.action_kinds.items()
    ]  # fmt: skip


def end_records(rows: list[Row]) -> list[dict[str, Any]]:
    """How each row's episodes ended (``done``: the env said so, for webshop a purchase;
    ``max_rounds``: out of turns; ...), a record per model, env and end reason."""
    return [
        {**_model_record(row), "end": end, "items": count, "share": count / row.episodes}
        for row in rows
        for end, count in row.ends.items()
    ]


def _model_record(row: Row) -> dict[str, Any]:
    return {
        "seed": row.seed,
        "iteration": label_iteration(row.iteration),
        "control": control_iteration(row.iteration) is not None,
        "variant": label_variant(row.iteration),
        "env": row.env,
        "split": row.split,
    }


_COMPARED = ("difference", "standard_error", "items", "wins", "losses", "ties", "score_difference",
             "score_standard_error")  # fmt: skip


def report_csv(rows: list[Row], comparisons: list[Comparison]) -> str:
    """One line per row (``task_type`` ``all``), then one per row and task type where the env
    has types; a model's comparisons in its own line (``baselines``): ``vs_previous_*``
    (against iteration k-1), ``vs_iteration_*`` (a variant against its iteration's model) and
    ``vs_control_*`` (iteration k against its control), empty elsewhere."""
    found = {(c.model, c.baseline, c.env): c for c in comparisons}
    columns = list(row_record(rows[0]))
    columns.insert(columns.index("env") + 1, "task_type")
    against_names = ("previous", "iteration", CONTROL)
    columns += [f"vs_{against}_{name}" for against in against_names for name in _COMPARED]
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        line = row_record(row) | {"task_type": ALL}
        for against, baseline in baselines(row.iteration).items():
            comparison = found.get((row.iteration, baseline, row.env))
            if comparison is not None:
                line |= {f"vs_{against}_{n}": getattr(comparison, n) for n in _COMPARED}
        writer.writerow(line)
    writer.writerows(task_type_records(rows))
    return table.getvalue()


def eval_dir(where: RunLayout, label: str) -> Path:
    """Where the model ``label`` was evaluated, in an environment's part of a run."""
    if (k := control_iteration(label)) is not None:
        return where.control_eval(k)
    name = label_variant(label)
    k = label_iteration(label)
    return where.variant_eval(k, name) if name else where.eval(k)


def model_dir(layout: RunLayout, label: str) -> Path:
    """Where the model ``label`` is, in a run."""
    if (k := control_iteration(label)) is not None:
        return layout.control_model(k)
    name = label_variant(label)
    k = label_iteration(label)
    return layout.variant_model(k, name) if name else layout.model(k)


def _outcomes(where: RunLayout, label: str) -> dict[str, Outcome]:
    path = eval_dir(where, label) / "episodes.jsonl"
    return outcomes(read_records(path, Episode) if path.exists() else [])


def plot_report(rows: list[Row], path: Path, *, title: str) -> None:
    """Write ``report_figure`` as a PNG."""
    import matplotlib.pyplot as plt

    figure = report_figure(rows, title=title)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def report_figure(rows: list[Row], *, title: str) -> Figure:
    """Success per iteration, one line per env, each point with its standard error as an
    error bar; the control and the variants as markers of their own. Where an env has task
    types, a second panel shows each model's success per type."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, no GUI toolkit
    import matplotlib.pyplot as plt

    typed_envs = {row.env for row in rows if row.task_types}
    bars = [
        TypeBar(model_label(row.iteration), type_label(row.env, task_type.name, typed_envs),
                task_type.success_rate, task_type.success_se)
        for row in rows
        for task_type in row.task_types
    ]  # fmt: skip
    figure, panels = plt.subplots(1, 2 if bars else 1, figsize=(12 if bars else 6, 4.5))
    axes = panels[0] if bars else panels
    markers = side_markers(row.iteration for row in rows)
    for env in dict.fromkeys(row.env for row in rows):
        line = [r for r in rows if r.env == env and is_iteration(r.iteration)]
        drawn = axes.errorbar(
            [int(r.iteration) for r in line], [100 * r.success_rate for r in line],
            yerr=[100 * r.success_se for r in line], marker="o", capsize=3, label=env,
        )  # fmt: skip
        for row in rows:
            if row.env == env and row.iteration in markers:
                marker, x = markers[row.iteration]
                axes.errorbar(
                    [x], [100 * row.success_rate],
                    yerr=[100 * row.success_se], marker=marker, markersize=10,
                    capsize=3, linestyle="none", color=drawn.lines[0].get_color(),
                    label=f"{env} {model_label(row.iteration)}", zorder=3,
                )  # fmt: skip
    axes.set_xlabel("iteration")
    axes.set_ylabel("success (%, ± standard error)")
    axes.set_ylim(-3, 103)  # a point at 0 or 100 % stays visible
    axes.set_xticks(sorted({label_iteration(r.iteration) for r in rows}))
    axes.set_title(title)
    axes.grid(alpha=0.3)
    axes.legend()
    if bars:
        draw_task_types(panels[1], bars, error="± standard error")
    figure.tight_layout()
    return figure


_CONTROL_MARKER = "*"
_VARIANT_MARKERS = ("D", "s", "^", "v", "P", "X")


def side_markers(labels: Iterable[str]) -> dict[str, tuple[str, float]]:
    """A marker and an x for each model off the line of iterations (a control: a star, each
    variant a marker of its own): a plot draws them as points beside their iteration, each a
    little to its right so that two of one iteration do not hide each other."""
    sides = dict.fromkeys(label for label in labels if not is_iteration(label))
    variants = itertools.cycle(_VARIANT_MARKERS)
    found: dict[str, tuple[str, float]] = {}
    for label in sides:
        k = label_iteration(label)
        beside = sum(label_iteration(other) == k for other in found)  # of its iteration, before
        marker = _CONTROL_MARKER if control_iteration(label) is not None else next(variants)
        found[label] = (marker, k + 0.06 * (beside + 1))
    return found


@dataclass(frozen=True)
class TypeBar:
    """One bar of the task-type panel: a model's success on one type, with its error."""

    model: str  # "iteration 0", "control", "control2", ...
    task_type: str
    success_rate: float
    error: float


def draw_task_types(axes: Any, bars: list[TypeBar], *, error: str) -> None:
    """Grouped bars: a group per task type, a bar per model, each with its error bar."""
    types = list(dict.fromkeys(bar.task_type for bar in bars))
    models = list(dict.fromkeys(bar.model for bar in bars))
    width = 0.8 / len(models)
    for offset, model in enumerate(models):
        own = {bar.task_type: bar for bar in bars if bar.model == model}
        shift = (offset - (len(models) - 1) / 2) * width
        axes.bar(
            [position + shift for position, name in enumerate(types) if name in own],
            [100 * own[name].success_rate for name in types if name in own],
            width, yerr=[100 * own[name].error for name in types if name in own],
            capsize=2, label=model,
        )  # fmt: skip
    axes.set_xticks(range(len(types)), types, rotation=25, ha="right", fontsize=8)
    axes.set_ylabel(f"success (%, {error})")
    axes.set_ylim(0, 103)
    axes.set_title("by task type")
    axes.grid(alpha=0.3, axis="y")
    axes.legend(fontsize=8)


def model_label(label: str) -> str:
    """How a report names a model: ``iteration 1``, ``control``, ``iteration 1 dpo``."""
    if control_iteration(label) is not None:
        return label
    name = label_variant(label)
    return f"iteration {label_iteration(label)}" + (f" {name}" if name else "")


def type_label(env: str, task_type: str, typed_envs: set[str]) -> str:
    """A task type's name, prefixed with its env where several envs of the run have types."""
    return f"{env}: {task_type}" if len(typed_envs) > 1 else task_type


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
        k = entry["iteration"]
        label = control_label(k) if is_control_stage(entry["stage"]) else str(k)
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


def _task_types(metrics_rows: list[dict[str, Any]], env: str) -> tuple[TaskType, ...]:
    return tuple(
        TaskType(row["category"], row["episodes"], row["success_rate"], row["mean_score"])
        for row in metrics_rows
        if row["env"] == env and row["category"] != ALL
    )


def _json(path: Path) -> Any:
    return json.loads(path.read_text()) if path.exists() else None
