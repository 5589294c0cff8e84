"""``agentgym report``: a run's success, score and cost per iteration and env, written as
report.csv, report.json and report.png; a run directory's seeds, each and across them; or two
evals compared item by item."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.table import Table

from agentcli.cli._output import loops_cell, result, stdout
from agentcli.errors import UsageError
from agentcli.iterate.report import model_label

if TYPE_CHECKING:
    from agentcli.compare import Comparison
    from agentcli.iterate.report import Row
    from agentcli.iterate.seeds import Beside, Difference, Sweep


def report(
    path: Annotated[
        Path,
        typer.Argument(
            help="The run directory (runs/<name>), or the first of two eval directories.",
            show_default=False,
        ),
    ],
    other: Annotated[
        Path | None,
        typer.Argument(
            help="A second eval directory: compare PATH's eval against it, item by item.",
            show_default=False,
        ),
    ] = None,
    published: Annotated[
        Path | None,
        typer.Option(
            help="A report.json of seeds (e.g. docs/results/quickstart.json): set each of"
            " this run directory's results beside that seed's and the range of its seeds.",
            exists=True,
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
) -> None:
    """Print a run's table of every iteration (and the control) per env and write
    report.csv, report.json and report.png beside its manifest. Given a run directory of
    seeds (runs/<name>, holding seed<N>/), each seed's table and, across the seeds, each
    model's mean success and spread and each paired difference's mean and standard error.
    Given two eval directories, the paired difference in success over the items both played.

    Example: agentgym report runs/quickstart
    """
    if other is not None:
        from agentcli.compare import compare_evals

        _show_comparisons(path, other, compare_evals(path, other))
        return
    from agentcli.iterate.report import CSV_NAME, JSON_NAME, PLOT_NAME, write_report
    from agentcli.iterate.seeds import (
        beside_published,
        other_machine_note,
        read_published,
        write_sweep_report,
    )
    from agentcli.run_layout import RunLayout

    if RunLayout(path).manifest.is_file():
        if published is not None:
            raise UsageError(f"--published compares a run directory of seeds: pass {path.parent}")
        rows, comparisons = write_report(path)
        _show_run(_name(path), rows, comparisons)
    else:
        against = read_published(published) if published is not None else None
        sweep = write_sweep_report(path)
        _show_sweep(sweep)
        if against is not None:
            _show_beside(against.path, beside_published(sweep, against))
            if note := other_machine_note(against):
                result(note)
    result(f"report → {', '.join(str(path / name) for name in (CSV_NAME, JSON_NAME, PLOT_NAME))}")


def _name(run: Path) -> str:
    """A run directory's name for a table's title: a whole path wraps the title over lines
    (the paths are on the last line printed)."""
    return run.resolve().name


def _show_run(title: str, rows: list[Row], comparisons: list[Comparison]) -> None:
    table = Table(title=title, box=box.SIMPLE_HEAD)
    columns = (
        "iter", "env", "items", "success", "score", "steps", "looped (stuck)", "trained steps",
        "tokens", "teacher $",
    )  # fmt: skip
    for column in columns:
        table.add_column(column, justify="left" if column in ("iter", "env") else "right")
    for row in rows:
        score = f"{row.mean_score:.3g}" + ("" if row.score_se is None else f" ± {row.score_se:.2g}")
        table.add_row(
            row.iteration, row.env, str(row.episodes),
            f"{100 * row.success_rate:.1f} ± {100 * row.success_se:.1f}%", score,
            f"{row.mean_steps:.1f}", loops_cell(row.looped, row.stuck), _count(row.train_steps),
            _count(row.tokens_trained),
            f"{row.teacher_cost:.4f}",
        )  # fmt: skip
    stdout.print(table)
    typed = [
        (row.env, task_type.name, model_label(row.iteration),
         f"{100 * task_type.success_rate:.1f} ± {100 * task_type.success_se:.1f}%"
         f" ({task_type.episodes})")
        for row in rows
        for task_type in row.task_types
    ]  # fmt: skip
    _show_breakdown(f"{title} by task type", "success ± standard error (items)", "task type", typed)
    steps = [
        (row.env, kind, model_label(row.iteration), _share(count, sum(row.action_kinds.values())))
        for row in rows
        for kind, count in row.action_kinds.items()
    ]
    ended = {end for row in rows if row.action_kinds for end, count in row.ends.items() if count}
    steps += [
        (row.env, f"ended: {end}", model_label(row.iteration), _share(count, row.episodes))
        for row in rows
        if row.action_kinds
        for end, count in row.ends.items()
        if end in ended
    ]
    _show_breakdown(
        f"{title} by action kind", "steps of each kind (share of steps); episodes by how they"
        " ended (share of items)", "kind", steps,
    )  # fmt: skip
    for c in comparisons:
        result(comparison_line(c))


def _show_breakdown(
    title: str, caption: str, label: str, cells: list[tuple[str, str, str, str]]
) -> None:
    """A table of (env, name, model, text) cells: a line per env and name (a task type, a
    kind of action), a column per model; nothing where there are no cells."""
    if not cells:
        return
    models = list(dict.fromkeys(model for _, _, model, _ in cells))
    found = {(env, name, model): text for env, name, model, text in cells}
    table = Table(title=title, caption=caption, box=box.SIMPLE_HEAD)
    for column in ("env", label, *models):
        table.add_column(column, justify="left" if column in ("env", label) else "right")
    for env, name in dict.fromkeys((env, name) for env, name, _, _ in cells):
        table.add_row(env, name, *(found.get((env, name, model), "-") for model in models))
    stdout.print(table)


def _show_sweep(sweep: Sweep) -> None:
    for report in sweep.seeds:
        _show_run(f"{_name(sweep.run)} seed {report.seed}", report.rows, report.comparisons)
    if len(sweep.seeds) == 1:
        return  # one seed has no spread: its table is all there is
    table = Table(title=f"{_name(sweep.run)} across seeds", box=box.SIMPLE_HEAD)
    for column in ("iter", "env", "seeds", "mean success", "sd", "min", "max"):
        table.add_column(column, justify="left" if column in ("iter", "env") else "right")
    for s in sweep.spreads:
        table.add_row(
            s.iteration, s.env, str(s.seeds), f"{100 * s.mean:.1f}%", _points(s.sd),
            f"{100 * s.low:.1f}%", f"{100 * s.high:.1f}%",
        )  # fmt: skip
    stdout.print(table)
    typed = [
        (s.env, s.task_type or "", model_label(s.iteration),
         f"{100 * s.mean:.1f}% ({_points(s.sd)})")
        for s in sweep.task_types
    ]  # fmt: skip
    _show_breakdown(
        f"{_name(sweep.run)} by task type", "mean success across seeds (sd)", "task type", typed
    )
    for d in sweep.differences:
        result(across_seeds_line(d))


def comparison_line(c: Comparison) -> str:
    """A run's paired comparison as ``report`` prints it (docs/ shows these lines too)."""
    return f"{c.env}: {model_label(c.model)} − {model_label(c.baseline)}: {_difference(c)}"


def across_seeds_line(d: Difference) -> str:
    """A paired difference across seeds as ``report`` prints it."""
    return (
        f"{d.env}: {model_label(d.model)} − {model_label(d.baseline)} across {d.seeds} seeds:"
        f" {100 * d.mean:+.1f} ± {_points(d.standard_error)} points (mean ± standard error"
        f" across seeds; per seed {100 * d.low:+.1f} to {100 * d.high:+.1f}, ahead in"
        f" {d.ahead} of {d.seeds})"
    )


def _show_beside(published: Path, rows: list[Beside]) -> None:
    for b in rows:
        here = f"{model_label(b.iteration)} ({b.env}, seed {b.seed}): {100 * b.success_rate:.1f}%"
        if b.published is None:
            same = f"{published} has no seed {b.seed}"
        elif b.published == b.success_rate:
            same = f"the same as {published}'s seed {b.seed}"
        else:
            same = f"{published}'s seed {b.seed}: {100 * b.published:.1f}% (differs)"
        spread = ""
        if b.spread is not None:
            spread = (
                f"; its {b.spread.seeds} seeds {100 * b.spread.low:.1f}–"
                f"{100 * b.spread.high:.1f}%, mean {100 * b.spread.mean:.1f}%"
            )
        result(f"{here}, {same}{spread}")


def _share(count: int, total: int) -> str:
    return f"{count} ({100 * count / total:.0f}%)" if total else str(count)


def _points(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _show_comparisons(model: Path, baseline: Path, comparisons: list[Comparison]) -> None:
    result(f"A = {model}")
    result(f"B = {baseline}")
    for c in comparisons:
        result(f"{c.env} ({c.split or 'unnamed split'}): A − B: {_difference(c)}")


def _difference(c: Comparison) -> str:
    score = (
        f"; score {c.score_difference:+.3f} ± {c.score_standard_error:.3f}"
        if c.score_difference is not None and score_reported(c.env)
        else ""
    )
    return (
        f"{100 * c.difference:+.1f} ± {100 * c.standard_error:.1f} points (paired over"
        f" {c.items} items: {c.wins} wins, {c.losses} losses, {c.ties} ties){score}"
    )


def score_reported(env: str) -> bool:
    """Whether the env's score is reported beside its success (webshop, sciworld)."""
    from agentcli.envs.registry import SPECS

    spec = SPECS.get(env)
    return spec is not None and spec.score_reported


def _count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"
