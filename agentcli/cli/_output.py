"""Where output goes: results on stdout (``result``, ``show_config``, tables), logs, progress
(``progress``) and errors on stderr."""

from __future__ import annotations

import logging
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

stdout = Console()
if not stdout.is_terminal:  # piped or captured results fit no screen: never cut a table's cells
    stdout.width = 160
stderr = Console(stderr=True)


def setup_logging(*, debug: bool, quiet: bool) -> None:
    from rich.logging import RichHandler

    level = logging.DEBUG if debug else logging.WARNING if quiet else logging.INFO
    handler = RichHandler(console=stderr, show_path=debug, rich_tracebacks=debug, markup=False)
    logging.basicConfig(level=level, format="%(message)s", datefmt="[%X]", handlers=[handler])
    # openai sends through httpx2, a fork of httpx with loggers of its own, and logs its retries;
    # torch logs its FakeTensor cache's counters at exit, whether or not anything compiled
    for noisy in ("httpx", "httpx2", "httpcore", "openai", "uvicorn.access", "torch"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if debug else logging.WARNING)


def show_config(config: Any) -> None:
    """``--print-config``: the resolved config as YAML, secrets hidden."""
    from agentcli.config import config_as_yaml

    stdout.print(config_as_yaml(config), end="", markup=False)


def loops_cell(looped: int | None, stuck: int | None) -> str:
    """A table cell of the episodes out of rounds in a loop, those stuck on an action that
    changed nothing in brackets (``evaluate.loop_period``); ``-`` where they were not counted."""
    return "-" if looped is None else f"{looped:,} ({stuck:,})"


def result(line: str) -> None:
    """One result line on stdout, as written: no markup, no highlighting, never cut."""
    stdout.print(line, markup=False, highlight=False, soft_wrap=True)


def progress(*fields: str) -> Progress:
    """Bars on stderr (terminals only): what, how far, ``fields`` (rich column templates over
    ``task.fields``), time so far and the time left."""
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        *(TextColumn(field) for field in fields),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    return Progress(*columns, console=stderr, disable=not stderr.is_terminal)
