"""`agentgym --version` prints the version written once, in pyproject.toml."""

from __future__ import annotations

from importlib.metadata import version

from typer.testing import CliRunner

from agentcli.cli.main import app


def test_version_is_the_installed_package_metadata():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"agentgym {version('agentgym')}"
