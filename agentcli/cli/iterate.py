"""``agentgym iterate``: run iterations of the LEAP loop over a run directory (resumable)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from agentcli.cli import _options
from agentcli.cli._output import progress, result, show_config, stdout


def iterate(
    config: _options.ConfigFile = None,
    iteration: Annotated[
        int | None, typer.Option("--iter", help="The iteration to run.", show_default=False)
    ] = None,
    iterations: Annotated[
        str | None,
        typer.Option("--iters", help="Iterations to run in turn, e.g. 0-3.", show_default=False),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="The run's seed (default: the config's seed, else 0); it runs in <run>/seed<N>.",
            show_default=False,
        ),
    ] = None,
    seeds: Annotated[
        str | None,
        typer.Option(
            "--seeds",
            help="Run the iterations once per seed, e.g. 0-4, each in <run>/seed<N>; the"
            " report covers every seed.",
            show_default=False,
        ),
    ] = None,
    from_stage: Annotated[
        str | None,
        typer.Option(
            help="Redo this stage of the (first) iteration and every stage after it.",
            show_default=False,
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Redo finished stages whose config changed.")
    ] = False,
    print_config: _options.PrintConfig = False,
    overrides: _options.Overrides = None,
) -> None:
    """Run iterations of the LEAP loop for one seed or several; rerunning skips finished
    stages and resumes the rest.

    Example: agentgym iterate --config configs/quickstart.yaml --iters 0-1 --seeds 0-4
    """
    from agentcli.iterate.config import iteration_numbers, seed_numbers
    from agentcli.iterate.loop import iteration_line, resolve_iterations, run_iterations
    from agentcli.iterate.report import CSV_NAME, JSON_NAME, PLOT_NAME

    configs = resolve_iterations(
        config,
        iteration_numbers(iteration, iterations),
        overrides or [],
        seeds=seed_numbers(seed, seeds),
    )
    if print_config:
        for resolved in configs:
            stdout.print(f"# seed {resolved.seed}, iteration {resolved.iter}", markup=False)
            show_config(resolved)
        return
    run = run_iterations(
        configs,
        from_stage=from_stage,
        force=force,
        progress=_stage_progress,
        on_iteration=lambda resolved, outcomes: result(iteration_line(resolved, outcomes)),
    )
    result(f"report → {', '.join(str(run / name) for name in (CSV_NAME, JSON_NAME, PLOT_NAME))}")


@contextmanager
def _stage_progress() -> Iterator[Any]:
    """A bar per stage on stderr (terminals only); yields the callback stages report to."""
    with progress() as bars:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int | None) -> None:
            if stage not in tasks:
                tasks[stage] = bars.add_task(stage, total=total)
            bars.update(tasks[stage], completed=done, total=total)

        yield update
