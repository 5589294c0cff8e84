"""The ``agentgym`` executable: wires the command groups and owns the error policy."""

from __future__ import annotations

import os
from typing import Annotated, NoReturn

import typer

from agentcli import __version__
from agentcli.cli import (
    _errors,
    annotate,
    build_data,
    collect,
    correct,
    data,
    env,
    evaluate,
    extract_state,
    iterate,
    model,
    report,
    rollout,
    train,
    view,
)
from agentcli.cli._output import setup_logging, stderr, stdout
from agentcli.quick_exit import quick_exit

app = typer.Typer(
    name="agentgym",
    help="Train LLM agents on interactive text environments.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(env.app, name="env")
app.add_typer(model.app, name="model")
app.add_typer(data.app, name="data")
app.add_typer(train.app, name="train")
app.command("collect")(collect.collect)
app.command("rollout")(rollout.rollout)
app.command("eval")(evaluate.evaluate)
app.command("annotate")(annotate.annotate)
app.command("extract-state")(extract_state.extract_state)
app.command("correct")(correct.correct)
app.command("build-data")(build_data.build_data)
app.command()(iterate.iterate)
app.command()(report.report)
app.command()(view.view)


def _show_version(value: bool) -> None:
    if value:
        stdout.print(f"agentgym {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks (also AGENTGYM_DEBUG=1).")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only warnings and errors.")] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Train LLM agents on interactive text environments.

    Every command takes --config FILE and key=value overrides; see docs/ for each command.
    """
    if debug:
        os.environ["AGENTGYM_DEBUG"] = "1"
    setup_logging(debug=_debugging(), quiet=quiet)


def _debugging() -> bool:
    return os.environ.get("AGENTGYM_DEBUG", "") not in ("", "0", "false")


def main() -> None:
    try:
        # Not standalone: usage errors come back here, to be one line like every other error.
        exit_code = app(prog_name="agentgym", standalone_mode=False)
    except Exception as exc:
        known = _errors.describe(exc)
        if known is None or _debugging():
            raise
        _fail(*known)
    if exit_code == _errors.EXIT_INTERRUPTED:  # typer answers Ctrl-C with this code
        _fail(*_errors.describe(KeyboardInterrupt()))
    quick_exit(exit_code if isinstance(exit_code, int) else 0)


def _fail(message: str, code: int) -> NoReturn:
    if message:  # a bare `agentgym` prints its help, which says it all
        stderr.print(f"[red]error:[/] {message}", markup=True, highlight=False, soft_wrap=True)
    quick_exit(code)


if __name__ == "__main__":
    main()
