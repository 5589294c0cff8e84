"""What annotate, extract-state and correct share: the config, the progress bar, the summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agentcli.cli._output import stdout

TEACHER_OPTIONS = ("base_url", "model_name", "concurrency", "max_cost", "dry_run")


def stage_config(
    model: type,
    config_file: Path | None,
    overrides: list[str] | None,
    *,
    teacher: str | None,
    **options: Any,
) -> Any:
    """The stage's config from a command's options; teacher options go under ``teacher.``.

    Without --teacher, --base-url means an LLM at that endpoint.
    """
    from agentcli.config import resolve_config

    cli = {key: value for key, value in options.items() if key not in TEACHER_OPTIONS}
    cli |= {f"teacher.{key}": options.get(key) for key in TEACHER_OPTIONS}
    cli["teacher.dry_run"] = options.get("dry_run") or None  # an unset flag keeps the config's
    cli["teacher.kind"] = teacher or ("openai" if options.get("base_url") else None)
    return resolve_config(model, config_file=config_file, cli=cli, overrides=overrides or ())


def run_with_progress(stage: Any, config: Any) -> Any:
    """Run ``stage`` (a function of agentcli.teacher.stages) with a progress bar on stderr."""
    from agentcli.cli._output import stderr

    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        TextColumn("{task.fields[rate]:.2f}/s"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=stderr, disable=not stderr.is_terminal) as progress:
        task = progress.add_task(stage.__name__, total=None, failed=0, rate=0.0)

        def on_item(stats: Any) -> None:
            progress.update(
                task,
                total=stats.total - stats.skipped,
                completed=stats.done + stats.failed + stats.estimated,
                failed=stats.failed,
                rate=stats.items_per_s,
            )

        return stage(config, on_item)


def print_stage_summary(stats: Any) -> None:
    """One line: what was done, what failed and where it is listed, what it cost."""
    calls = ""
    if stats.calls is not None:
        calls = (
            f"; {stats.calls.sent} requests ({stats.calls.retries} retries,"
            f" {stats.calls.repairs} repairs), {stats.calls.cached} answered from the cache"
        )
    if stats.dry_run:
        cost = stats.calls.estimated_cost if stats.calls else 0.0
        line = (
            f"{stats.stage} (dry run): {stats.estimated} items would send requests costing at"
            f" most ${cost:.4f} (without repairs or retries){calls}; nothing was written"
        )
    else:
        skipped = f", {stats.skipped} already done" if stats.skipped else ""
        failed = f", {stats.failed} failed (see {stats.failures})" if stats.failed else ""
        spent = f", ${stats.spent:.4f} spent in all" if stats.calls is not None else ""
        line = f"{stats.stage}: {stats.done} done{skipped}{failed}{calls}{spent} → {stats.output}"
    stdout.print(line, markup=False, highlight=False, soft_wrap=True)


def run_stage(stage: Any, config: Any, *, print_config: bool) -> None:
    """``--print-config`` shows the config; otherwise run ``stage`` and print its summary."""
    if print_config:
        from agentcli.cli._output import show_config

        show_config(config)
        return
    print_stage_summary(run_with_progress(stage, config))
