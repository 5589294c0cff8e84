"""Fixtures for every test: isolated home and caches, no API keys, no hub access."""

from __future__ import annotations

import pytest

API_KEY_VARS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "WANDB_API_KEY", "HF_TOKEN", "ALFWORLD_DATA")


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("HF_HOME", str(home / ".cache" / "huggingface"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in API_KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    for name in [n for n in __import__("os").environ if n.startswith("AGENTGYM_")]:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory):
    """A tiny random Llama with its tokenizer, built once per test session (seconds)."""
    from agentcli.models import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))
