"""What collect, rollout and eval share: building the rollout config and showing progress."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agentcli.cli._output import stderr, stdout


def rollout_config(
    *,
    config_file: Path | None,
    overrides: list[str] | None,
    options: dict[str, Any],
    policy: dict[str, Any],
) -> Any:
    from agentcli.config import resolve_config
    from agentcli.rollout import RolloutConfig

    cli = {**options, **{f"policy.{key}": value for key, value in policy.items()}}
    return resolve_config(
        RolloutConfig, config_file=config_file, cli=cli, overrides=overrides or ()
    )


def run_with_progress(config: Any, run: Any = None) -> Any:
    """Run the rollout (or ``run``, e.g. eval) with a progress bar on stderr: episodes,
    success so far, episodes/s."""
    from agentcli.rollout import execute

    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("success {task.fields[success]:.0%}"),
        TextColumn("{task.fields[rate]:.2f} ep/s"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=stderr, disable=not stderr.is_terminal) as progress:
        task = progress.add_task(config.env, total=None, success=0.0, rate=0.0)

        def on_episode(episode: Any, stats: Any) -> None:
            progress.update(
                task,
                total=stats.total - stats.skipped,
                completed=stats.finished,
                success=stats.success_rate,
                rate=stats.episodes_per_s,
            )

        return (run or execute)(config, on_episode)


def print_rollout_summary(config: Any, stats: Any) -> None:
    skipped = f", {stats.skipped} already done" if stats.skipped else ""
    stdout.print(
        f"{config.env}: {stats.finished} episodes{skipped}, success {stats.success_rate:.1%}, "
        f"{stats.errors} errors → {config.episodes_path}"
    )
