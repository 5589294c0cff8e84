"""``agentgym data``: convert episode files to and from AgentGym's and LEAP's formats."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from agentcli.cli._output import result

app = typer.Typer()


@app.callback()
def data() -> None:
    """Data files: convert episodes to and from AgentGym and LEAP formats."""
    # A callback keeps `data` a command group while it has a single command.


@app.command()
def convert(
    source: Annotated[
        Path,
        typer.Argument(
            help="An AgentGym JSON list (.json), a JSONL file of episodes (.jsonl), or a"
            " LEAP-style directory (summary.csv and one <env_idx>.json log per episode).",
            show_default=False,
        ),
    ],
    target: Annotated[
        Path, typer.Argument(help="The file, or for --to leap the directory, to write.")
    ],
    to: Annotated[
        Literal["agentgym", "leap", "episodes"],
        typer.Option("--to", help="Output format.", show_default=False),
    ],
    env: Annotated[
        str | None,
        typer.Option(
            help="Environment of LEAP logs that do not name theirs (those LEAP itself wrote).",
            show_default=False,
        ),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace the target file if it exists.")
    ] = False,
) -> None:
    """Convert episodes between formats; the input format is detected.

    Nothing is lost: an AgentGym or LEAP file converted to episodes and back is the same,
    byte for byte. Example: agentgym data convert demos.json demos.jsonl --to episodes
    """
    from agentcli.data.convert import convert as run_conversion
    from agentcli.envs.registry import SPECS, get_spec

    if env is not None:
        get_spec(env)  # an unknown name is one line with the closest known one
    converted = run_conversion(
        source, target, to, env=env, overwrite=overwrite, env_facts=SPECS.get
    )
    result(f"{converted.count} episodes: {source} ({converted.source_format}) → {target} ({to})")
