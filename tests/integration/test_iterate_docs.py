"""docs/iterate.md's config reference is generated from IterateConfig's fields by
scripts/iterate_reference.py; this test keeps it current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_the_config_reference_is_up_to_date():
    script = Path(__file__).parents[2] / "scripts" / "iterate_reference.py"
    result = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
