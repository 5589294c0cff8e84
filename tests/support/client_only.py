"""An environment agentgym has only a client for (as WebArena would be): every built-in env has
a simulator, so tests of the client-only paths register this one for their duration."""

from __future__ import annotations

import dataclasses

import pytest

from agentcli.envs import registry

NAME = "remote-shop"


def register_client_only_env(monkeypatch: pytest.MonkeyPatch) -> str:
    spec = dataclasses.replace(registry.get_spec("webshop"), name=NAME, load=None)
    monkeypatch.setitem(registry.SPECS, NAME, spec)
    return NAME
