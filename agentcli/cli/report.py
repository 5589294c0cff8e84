"""``agentgym report``: a run's success, score and cost per iteration and env; a PNG plot."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from agentcli.cli._output import result, stdout


def report(
    run: Annotated[Path, typer.Argument(help="The run directory (runs/<name>).")],
) -> None:
    """Print a table of every iteration (and the control) per env, and write report.png.

    Example: agentgym report runs/quickstart
    """
    from agentcli.iterate.report import PLOT_NAME, paired_comparisons, plot_report, read_report

    rows = read_report(run)
    plot_report(rows, run / PLOT_NAME, title=run.name)
    table = Table(title=str(run), box=box.SIMPLE_HEAD)
    columns = (
        "iter", "env", "items", "success", "score", "steps", "trained steps", "tokens",
        "teacher $",
    )  # fmt: skip
    for column in columns:
        table.add_column(column, justify="left" if column in ("iter", "env") else "right")
    for row in rows:
        table.add_row(
            row.iteration, row.env, str(row.episodes),
            f"{100 * row.success_rate:.1f} ± {100 * row.success_se:.1f}%",
            f"{row.mean_score:.3g}", f"{row.mean_steps:.1f}", _count(row.train_steps),
            _count(row.tokens_trained), f"{row.teacher_cost:.4f}",
        )  # fmt: skip
    stdout.print(table)
    for c in paired_comparisons(run, rows):
        baseline = c.baseline if c.baseline == "control" else f"iteration {c.baseline}"
        result(
            f"{c.env}: iteration {c.model} − {baseline}: {100 * c.difference:+.1f}"
            f" ± {100 * c.standard_error:.1f} points (paired over {c.items} items)"
        )
    result(f"plot → {run / PLOT_NAME}")


def _count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"
