"""The local-model policy as a fresh process imports it."""

from __future__ import annotations

import json
import subprocess
import sys


def test_importing_the_policy_imports_no_torch():
    probe = (
        "import sys, json, agentcli.policy.local;"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'torch', 'transformers', 'tokenizers'})))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(loaded) == []
