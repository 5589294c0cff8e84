"""The one place that turns exceptions into a one-line message and an exit code."""

from __future__ import annotations

import errno

import typer
from typer.exceptions import TyperException

from agentcli.config import shorter_wording
from agentcli.errors import AgentGymError

EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def describe(exc: BaseException) -> tuple[str, int] | None:
    """A known failure as (message, exit code); None for a bug, which keeps its traceback."""
    if isinstance(exc, AgentGymError):
        return str(exc), exc.exit_code
    if isinstance(exc, TyperException):  # a bad option value, a missing option or command
        message = shorter_wording(exc.format_message())
        return (f"{message} (see --help)" if message else ""), exc.exit_code
    if isinstance(exc, KeyboardInterrupt | typer.Abort):
        return (
            "interrupted: rerun the same command to resume (finished work is kept)",
            EXIT_INTERRUPTED,
        )
    if isinstance(exc, FileNotFoundError):
        return f"no such file or directory: {exc.filename}; check the path", EXIT_USAGE
    if isinstance(exc, IsADirectoryError | NotADirectoryError):
        return f"{exc.filename}: {exc.strerror.lower()}; check the path", EXIT_USAGE
    if isinstance(exc, PermissionError):
        return f"permission denied: {exc.filename}; choose a path you can write", EXIT_USAGE
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return (
            "no space left on the device; free some and rerun (finished work is kept)",
            EXIT_RUNTIME,
        )
    return None
