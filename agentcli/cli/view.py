"""``agentgym view``: a local web page over a run, an eval, or a file of episodes or corrections."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentcli.cli._output import result

DEFAULT_PORT = 8765


def view(
    path: Annotated[
        Path,
        typer.Argument(
            help="A run directory (runs/<name>), an eval or rollout directory, or a JSONL file"
            " of episodes or corrections.",
            show_default=False,
        ),
    ],
    port: Annotated[
        int,
        typer.Option(help="TCP port; 0: any free one.", min=0, max=65535),
    ] = DEFAULT_PORT,
    host: Annotated[
        str, typer.Option(help="Interface to bind; 0.0.0.0 exposes it to the network.")
    ] = "127.0.0.1",
    export: Annotated[
        Path | None,
        typer.Option(
            help="Write the pages as static files into this directory (open its index.html"
            " from disk, no server) instead of serving them.",
            file_okay=False,
            show_default=False,
        ),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="--export: replace an earlier export there.")
    ] = False,
) -> None:
    """Browse a run, an eval or a file of episodes in a local web page, or export it.

    Results per iteration, episode lists with filters, each step beside the teacher's
    correction, the same item across iterations. Serves until Ctrl-C.

    Example: agentgym view runs/quickstart
    """
    if export is not None:
        from agentcli.view.export import export_site

        exported = export_site(path, export, overwrite=overwrite)
        result(
            f"{exported.records:,} records of {exported.datasets} files → {exported.out}"
            f" (open {exported.out / 'index.html'})"
        )
        return
    from agentcli.view.server import bind

    server = bind(path, host, port)
    server.run(on_ready=lambda: result(f"serving {path} at {server.url} (Ctrl-C stops it)"))
