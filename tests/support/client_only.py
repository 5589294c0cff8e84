"""An environment agentgym has only a client for and whose tasks it does not know (WebArena is
client only, but its 812 tasks are known): tests of the paths that need such an env register
this one, for a test's duration or in the fresh process of a command."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.envs import registry
from agentcli.envs.base import EnvSpec

NAME = "remote-shop"
ROOT = Path(__file__).parents[2]
# A fresh process that registers the env, then runs the CLI as `agentgym` does.
_CLI = (
    "import sys; from tests.support import client_only; client_only.register(); "
    "from agentcli.cli.main import main; sys.argv[0] = 'agentgym'; main()"
)


def client_only_spec() -> EnvSpec:
    """webshop's spec (its wire: AgentGym's webshop servers serve it) without a simulator."""
    return dataclasses.replace(registry.get_spec("webshop"), name=NAME, load=None)


def register() -> None:
    registry.SPECS[NAME] = client_only_spec()


def register_client_only_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(registry.SPECS, NAME, client_only_spec())
    return NAME


def agentgym_with_client_only_env(*args: str) -> subprocess.CompletedProcess[str]:
    """`agentgym ARGS` in a fresh process that knows the client-only env."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    environ = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb", "PYTHONPATH": path}
    return subprocess.run([sys.executable, "-c", _CLI, *args], capture_output=True, text=True,
                          env=environ, cwd=ROOT, timeout=120)  # fmt: skip
