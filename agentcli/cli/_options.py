"""Option types shared by every command, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

Env = Annotated[
    str,
    typer.Option(
        "--env",
        "--task",
        help="Environment name (see `agentgym env list`); --task is AgentGym's name for it.",
        show_default=False,
    ),
]
EnvArgument = Annotated[str, typer.Argument(help="Environment name (see `agentgym env list`).")]
ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        help="YAML config; command-line options and key=value overrides take precedence.",
        exists=True,
        dir_okay=False,
        show_default=False,
    ),
]
Overrides = Annotated[
    list[str] | None,
    typer.Argument(
        help="Config overrides as key=value (dotted keys for nested fields), applied last.",
        show_default=False,
    ),
]
PrintConfig = Annotated[
    bool, typer.Option("--print-config", help="Print the resolved config as YAML and exit.")
]
