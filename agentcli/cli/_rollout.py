"""What collect, rollout and eval share: their config, the progress bar, the summary line."""

from __future__ import annotations

from typing import Any

from agentcli.cli._output import progress, result


def roll_out(config: Any) -> None:
    """Run the rollout with a progress bar, then its summary line."""
    print_rollout_summary(config, run_with_progress(config))


def run_with_progress(config: Any, run: Any = None) -> Any:
    """Run the rollout (or ``run``, e.g. eval) with a progress bar on stderr: episodes of the
    items known up front, success so far, episodes and turns per second, time left."""
    from agentcli.rollout import execute

    fields = (
        "success {task.fields[success]:.0%}",
        "{task.fields[rate]:.2f} ep/s",
        "{task.fields[turns]:.1f} turns/s",
    )
    with progress(*fields) as bars:
        task = bars.add_task(config.env, total=None, success=0.0, rate=0.0, turns=0.0)

        def on_progress(stats: Any) -> None:
            bars.update(
                task,
                total=stats.pending,
                completed=stats.finished,
                success=stats.success_rate,
                rate=stats.episodes_per_s,
                turns=stats.turns_per_s,
            )

        return (run or execute)(config, on_progress)


def print_rollout_summary(config: Any, stats: Any) -> None:
    skipped = f", {stats.skipped} already done" if stats.skipped else ""
    result(
        f"{config.env}: {stats.finished} episodes{skipped}, success {stats.success_rate:.1%}, "
        f"{stats.errors} errors → {config.episodes_path}"
    )
