"""``agentgym build-data``: an iteration's training set from demos and corrections."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentcli.cli import _options
from agentcli.cli._output import show_config, stdout


def build_data(
    method: Annotated[str | None, typer.Option(help="bc | sft | dpo", show_default=False)] = None,
    iteration: Annotated[
        int | None,
        typer.Option(
            "--iter",
            help="0: demos only; k: demos + corrections of iterations < k.",
            show_default=False,
        ),
    ] = None,
    run: Annotated[
        Path | None, typer.Option(help="Run directory (runs/<name>).", show_default=False)
    ] = None,
    format: Annotated[
        str | None,
        typer.Option(help="multi-turn | single-prompt [default: multi-turn]", show_default=False),
    ] = None,
    mix: Annotated[
        str | None,
        typer.Option(
            help="Earlier iterations' corrections: balanced | all | none [default: balanced]",
            show_default=False,
        ),
    ] = None,
    keep_uncorrected: Annotated[
        bool | None,
        typer.Option(
            "--keep-uncorrected/--skip-uncorrected",
            help="Train on steps the student already got right [default: skip]",
            show_default=False,
        ),
    ] = None,
    holdout: Annotated[
        float | None,
        typer.Option(help="Share of items held out as test [default: 0.05]", show_default=False),
    ] = None,
    seed: _options.Seed = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Output directory [default: <run>/iter<k>/data]", show_default=False),
    ] = None,
    config: _options.ConfigFile = None,
    print_config: _options.PrintConfig = False,
    overrides: _options.Overrides = None,
) -> None:
    """Write an iteration's training set (train and test files) from demos and corrections.

    Example: agentgym build-data --method sft --iter 1 --run runs/demo
    """
    from agentcli.config import resolve_config
    from agentcli.data.build import BuildDataConfig
    from agentcli.data.build import build_data as run_build

    resolved = resolve_config(
        BuildDataConfig,
        config_file=config,
        cli={
            "method": method, "iter": iteration, "run": run, "view.format": format, "mix": mix,
            "keep_uncorrected": keep_uncorrected, "holdout": holdout, "seed": seed, "out": out,
        },
        overrides=overrides or (),
    )  # fmt: skip
    if print_config:
        show_config(resolved)
        return
    stdout.print(run_build(resolved).line(), markup=False, highlight=False, soft_wrap=True)
