"""``agentgym build-data``: an iteration's training set from demos and corrections."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from agentcli.cli import _options
from agentcli.cli._output import result


def _option(annotation: object, help: str, *names: str, key: str | None = None) -> _options.Option:
    return _options.Option(
        Annotated[annotation | None, typer.Option(*names, help=help, show_default=False)], key
    )


def _config() -> type:
    from agentcli.data.build import BuildDataConfig

    return BuildDataConfig


def _run(config) -> None:
    from agentcli.data.build import build_data as run_build

    result(run_build(config).line())


build_data = _options.command(
    """Write an iteration's training set (train and test files) from demos and corrections.

    Example: agentgym build-data --method sft --iter 1 --run runs/demo
    """,
    {
        "method": _option(Literal["bc", "sft", "dpo"], "Which training set to build."),
        "iteration": _option(int, "0: demos only; k: demos + corrections of iterations < k.",
                             "--iter", key="iter"),
        "run": _option(Path, "Run directory (runs/<name>)."),
        "format": _option(Literal["multi-turn", "single-prompt"],
                          "How the student is shown its history (default: multi-turn)",
                          key="view.format"),
        "prompt": _options.Option(_options.Prompt, "view.prompt"),
        "mix": _option(Literal["balanced", "all", "none"],
                       "Earlier iterations' corrections (default: balanced)"),
        "keep_uncorrected": _option(bool, "Train on steps the student already got right"
                                    " (default: skip)", "--keep-uncorrected/--skip-uncorrected"),
        "holdout": _option(float, "Share of items held out as test (default: 0.05)"),
        "seed": _option(int, "Seed of the train/test split and the sampling (default: 0)"),
        "out": _option(Path, "Output directory (default: <run>/iter<k>/data)"),
        "overwrite": _options.Option(
            Annotated[bool, typer.Option(help="Replace a set built with other settings.")],
            default=False,
        ),
    },
    config=_config,
    run=_run,
)  # fmt: skip
