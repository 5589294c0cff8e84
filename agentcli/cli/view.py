"""``agentgym view``: a local web page over a run, an eval, or a file of episodes or corrections."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentcli.cli._output import result
from agentcli.errors import UsageError

DEFAULT_PORT = 8765
DEFAULT_HOST = "127.0.0.1"


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
        int | None,
        typer.Option(
            help=f"TCP port (default: {DEFAULT_PORT}); 0: any free one.",
            min=0,
            max=65535,
            show_default=False,
        ),
    ] = None,
    host: Annotated[
        str | None,
        typer.Option(
            help=f"Interface to bind (default: {DEFAULT_HOST}, loopback only); 0.0.0.0 exposes"
            " it to the network.",
            show_default=False,
        ),
    ] = None,
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

    Example: agentgym view runs/quickstart/seed0
    """
    if export is not None:
        from agentcli.view.export import export_site

        if port is not None or host is not None:
            raise UsageError("--port and --host are for serving; --export writes files: drop them")
        exported = export_site(path, export, overwrite=overwrite)
        skipped = len(exported.skipped)
        result(
            f"{exported.records:,} records of {exported.datasets} files → {exported.out}"
            f" (open {exported.out / 'index.html'})"
            + (f"; skipped {skipped} that link outside {path}" if skipped else "")
        )
        return
    if overwrite:
        raise UsageError("--overwrite replaces an earlier export: give --export DIR too")
    from agentcli.view.server import bind

    server = bind(path, host or DEFAULT_HOST, DEFAULT_PORT if port is None else port)
    server.run(on_ready=lambda: result(f"serving {path} at {server.url} (Ctrl-C stops it)"))
