"""``agentgym report``: a run's success, score and cost per iteration and env, written as
report.csv, report.json and report.png; or two evals compared item by item."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.table import Table

from agentcli.cli._output import result, stdout

if TYPE_CHECKING:
    from agentcli.compare import Comparison


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
) -> None:
    """Print a run's table of every iteration (and the control) per env and write
    report.csv, report.json and report.png beside its manifest; or, given two eval
    directories, the paired difference in success over the items both played.

    Example: agentgym report runs/quickstart
    """
    if other is not None:
        from agentcli.compare import compare_evals

        _show_comparisons(path, other, compare_evals(path, other))
        return
    from agentcli.iterate.report import CSV_NAME, JSON_NAME, PLOT_NAME, write_report

    rows, comparisons = write_report(path)
    table = Table(title=str(path), box=box.SIMPLE_HEAD)
    columns = (
        "iter", "env", "items", "success", "score", "steps", "trained steps", "tokens",
        "teacher $",
    )  # fmt: skip
    for column in columns:
        table.add_column(column, justify="left" if column in ("iter", "env") else "right")
    for row in rows:
        score = f"{row.mean_score:.3g}" + ("" if row.score_se is None else f" ± {row.score_se:.2g}")
        table.add_row(
            row.iteration, row.env, str(row.episodes),
            f"{100 * row.success_rate:.1f} ± {100 * row.success_se:.1f}%", score,
            f"{row.mean_steps:.1f}", _count(row.train_steps), _count(row.tokens_trained),
            f"{row.teacher_cost:.4f}",
        )  # fmt: skip
    stdout.print(table)
    for c in comparisons:
        baseline = c.baseline if c.baseline == "control" else f"iteration {c.baseline}"
        result(f"{c.env}: iteration {c.model} − {baseline}: {_difference(c)}")
    result(f"report → {', '.join(str(path / name) for name in (CSV_NAME, JSON_NAME, PLOT_NAME))}")


def _show_comparisons(model: Path, baseline: Path, comparisons: list[Comparison]) -> None:
    result(f"A = {model}")
    result(f"B = {baseline}")
    for c in comparisons:
        result(f"{c.env} ({c.split or 'unnamed split'}): A − B: {_difference(c)}")


def _difference(c: Comparison) -> str:
    return (
        f"{100 * c.difference:+.1f} ± {100 * c.standard_error:.1f} points (paired over"
        f" {c.items} items: {c.wins} wins, {c.losses} losses, {c.ties} ties)"
    )


def _count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"
