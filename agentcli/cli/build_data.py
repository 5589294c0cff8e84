"""``agentgym build-data``: an iteration's training set from demos and corrections."""

from __future__ import annotations

from agentcli.cli import _options
from agentcli.cli._output import result
from agentcli.data.build import BuildDataConfig


def _run(config) -> None:
    from agentcli.data.build import build_data as run_build

    result(run_build(config).line())


build_data = _options.command(
    """Write an iteration's training set (train and test files) from demos and corrections.

    Example: agentgym build-data --method sft --iter 1 --run runs/demo
    """,
    {
        "method": _options.Option(),
        "iter": _options.Option(),
        "run": _options.Option(),
        "format": _options.Option("view.format"),
        **_options.VIEW,
        "mix": _options.Option(),
        # its negative says what leaving the steps out does
        "keep_uncorrected": _options.Option(flags=("--keep-uncorrected/--skip-uncorrected",)),
        "holdout": _options.Option(),
        "seed": _options.Option(),
        "out": _options.Option(),
        # build-data has always taken --no-overwrite too; kept so no command line breaks
        "overwrite": _options.Option(flags=("--overwrite/--no-overwrite",)),
    },
    config=BuildDataConfig,
    run=_run,
)
