"""Where output goes: results on stdout, logs, progress and errors on stderr."""

from __future__ import annotations

import logging
from typing import Any

from rich.console import Console

stdout = Console()
if not stdout.is_terminal:  # piped or captured results fit no screen: never cut a table's cells
    stdout.width = 160
stderr = Console(stderr=True)


def setup_logging(*, debug: bool, quiet: bool) -> None:
    from rich.logging import RichHandler

    level = logging.DEBUG if debug else logging.WARNING if quiet else logging.INFO
    handler = RichHandler(console=stderr, show_path=debug, rich_tracebacks=debug, markup=False)
    logging.basicConfig(level=level, format="%(message)s", datefmt="[%X]", handlers=[handler])
    for noisy in ("httpx", "httpcore", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if debug else logging.WARNING)


def show_config(config: Any) -> None:
    """``--print-config``: the resolved config as YAML, secrets hidden."""
    from agentcli.config import config_as_yaml

    stdout.print(config_as_yaml(config), end="", markup=False)
