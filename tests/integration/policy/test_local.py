"""The local-model policy as a fresh process imports it."""

from __future__ import annotations

from tests.support.processes import heavy_modules_imported_by


def test_importing_the_policy_imports_no_torch():
    heavy = {"torch", "transformers", "tokenizers"}
    assert heavy_modules_imported_by("agentcli.policy.local", heavy) == []
