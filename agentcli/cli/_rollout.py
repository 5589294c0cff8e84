"""What collect, rollout and eval share: building the rollout config and showing progress."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agentcli.cli._output import stderr, stdout

POLICY_OPTIONS = ("model", "base_url", "model_name", "seed", "temperature")


def rollout_config(
    config_file: Path | None, overrides: list[str] | None, *, policy: str | None, **options: Any
) -> Any:
    """The RolloutConfig from a command's options; policy options go under ``policy.``.

    Without --policy, --base-url means an endpoint and --model a local model.
    """
    from agentcli.config import resolve_config
    from agentcli.rollout import RolloutConfig

    cli = {key: value for key, value in options.items() if key not in POLICY_OPTIONS}
    cli |= {f"policy.{key}": options.get(key) for key in POLICY_OPTIONS}
    cli["policy.kind"] = policy or (
        "openai" if options.get("base_url") else "local" if options.get("model") else None
    )
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
