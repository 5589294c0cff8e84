"""What annotate, extract-state and correct share: the command, the progress bar, the summary."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentcli.cli import _options
from agentcli.cli._output import progress, result
from agentcli.teacher import stages


def stage_command(doc: str, stage: str, *groups: _options.Group) -> Callable[..., None]:
    """The command of teacher stage ``stage`` (``annotate``, ``extract_state``, ``correct``):
    its config is ``agentcli.teacher.stages``' ``<Stage>Config``; it runs with a progress bar
    and ends with the stage's summary line."""

    config = getattr(stages, stage.title().replace("_", "") + "Config")

    def run(resolved: Any) -> None:
        print_stage_summary(run_with_progress(getattr(stages, stage), resolved))

    return _options.command(doc, _options.ENV, *groups, _options.TEACHER, _options.RESUMABLE_OUT,
                            config=config, run=run)  # fmt: skip


def run_with_progress(stage: Any, config: Any) -> Any:
    """Run ``stage`` (a function of agentcli.teacher.stages) with a progress bar on stderr."""
    with progress("{task.fields[failed]} failed", "{task.fields[rate]:.2f}/s") as bars:
        task = bars.add_task(stage.__name__, total=None, failed=0, rate=0.0)

        def on_item(stats: Any) -> None:
            bars.update(
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
    result(line)
