"""``agentgym eval``: success rate, score and steps of a policy, per env and task category."""

from __future__ import annotations

from rich.table import Table

from agentcli.cli import _options
from agentcli.cli._output import loops_cell, stdout
from agentcli.cli._rollout import run_with_progress
from agentcli.rollout import EvalConfig


def _run(config) -> None:
    from agentcli.evaluate import evaluate as run_eval

    rows = run_with_progress(config, run_eval)
    table = Table(title=f"eval → {config.episodes_path.parent}")
    columns = ("env", "category", "episodes", "success", "score", "steps", "looped (stuck)",
               "errors")  # fmt: skip
    for column in columns:
        table.add_column(column, justify="left" if column in ("env", "category") else "right")
    for row in rows:
        table.add_row(
            row.env, row.category, str(row.episodes),
            f"{100 * row.success_rate:.1f} ± {100 * row.success_se:.1f}%",
            f"{row.mean_score:.3g} ± {row.score_se:.2g}", f"{row.mean_steps:.1f}",
            loops_cell(row.looped, row.stuck), str(row.errors),
        )  # fmt: skip
    stdout.print(table)


evaluate = _options.command(
    """Evaluate a model: success rate, mean score and steps; summary.csv and metrics.json.

    Example: agentgym eval --env textcraft --model runs/x/iter0/model --split test --out runs/x/eval
    """,
    _options.ENV, _options.STUDENT, _options.ITEMS, _options.EPISODES, _options.STUDENT_VIEW,
    _options.RESUMABLE_OUT,
    config=EvalConfig,
    run=_run,
)  # fmt: skip
