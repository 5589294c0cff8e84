"""``agentgym env``: list, serve and check environment servers."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from agentcli.cli import _options
from agentcli.cli._output import stderr, stdout

app = typer.Typer(
    help="Environment servers: list the built-in ones, serve one over HTTP, check one."
)


@app.command("list")
def list_envs() -> None:
    """Built-in environments: splits and task counts, and what each needs to run."""
    from agentcli.envs.registry import SPECS, overview

    table = Table(title="environments")
    for column in ("env", "splits (tasks)", "max rounds", "port", "needs", "status"):
        table.add_column(column)
    with stderr.status("loading environments…"):
        rows = [overview(spec) for spec in SPECS.values()]
    for row in rows:
        splits = ", ".join(f"{name} {count}" for name, count in row.splits.items()) or "-"
        color = "green" if row.status == "ready" else "yellow"
        status = f"[{color}]{escape(row.status)}[/]"
        table.add_row(
            row.spec.name,
            splits,
            str(row.spec.max_rounds),
            str(row.spec.default_port),
            escape(row.spec.requires),
            status,
        )
    stdout.print(table)


@app.command()
def serve(
    env: _options.EnvArgument,
    port: Annotated[
        int | None,
        typer.Option(help="TCP port (default: the env's usual port)", show_default=False),
    ] = None,
    host: Annotated[
        str | None,
        typer.Option(
            help="Interface to bind (default: 127.0.0.1, loopback only)", show_default=False
        ),
    ] = None,
    max_sessions: Annotated[
        int | None,
        typer.Option(
            help="Live sessions at most; more get HTTP 503 (default: 256)", show_default=False
        ),
    ] = None,
    idle_timeout: Annotated[
        float | None,
        typer.Option(
            help="Seconds before an unused session is closed (default: never; a full server"
            " closes one unused for 5 min to make room)",
            show_default=False,
        ),
    ] = None,
    config: _options.ConfigFile = None,
    print_config: _options.PrintConfig = False,
    overrides: _options.Overrides = None,
) -> None:
    """Serve an environment over HTTP, wire-compatible with AgentGym's env servers.

    Example: agentgym env serve textcraft --port 36008
    """
    from agentcli.config import config_as_yaml, resolve_config
    from agentcli.envs.wire.server import ServeConfig
    from agentcli.envs.wire.server import serve as run_server

    resolved = resolve_config(
        ServeConfig,
        config_file=config,
        cli={
            "env": env,
            "port": port,
            "host": host,
            "max_sessions": max_sessions,
            "idle_timeout_s": idle_timeout,
        },
        overrides=overrides or (),
    )
    if print_config:
        stdout.print(config_as_yaml(resolved), end="", markup=False)
        return
    run_server(resolved)


@app.command()
def check(
    url: Annotated[str, typer.Argument(help="Server base URL, e.g. http://127.0.0.1:36008")],
    env: _options.Env,
    item: Annotated[int, typer.Option(help="Item index to reset to.", min=0)] = 0,
    steps: Annotated[int, typer.Option(help="Steps to take after the reset.", min=0)] = 3,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the server.")] = 30.0,
) -> None:
    """Drive a server (ours or AgentGym's): create, reset, a few steps, close; print a verdict.

    Exits 0 when every stage passed, 1 otherwise.
    """
    from agentcli.envs.wire.check import check_server

    report = asyncio.run(check_server(url, env, index=item, steps=steps, timeout_s=timeout))
    table = Table(title=f"{env} server at {url}")
    for column in ("stage", "ok", "time", "detail"):
        table.add_column(column)
    for result in report.results:
        mark = "[green]✓[/]" if result.ok else "[red]✗[/]"
        table.add_row(result.name, mark, f"{result.seconds * 1000:.0f} ms", result.detail)
    stdout.print(table)
    verdict = "[green]PASS[/]" if report.ok else "[red]FAIL[/]"
    stdout.print(f"verdict: {verdict}")
    if not report.ok:
        raise typer.Exit(1)
