"""What the doc generators share: write a generated page, or check that it is up to date."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def write_or_check(page: Path, render: Callable[[], str], *, script: str, description: str) -> None:
    """``script`` rewrites ``page`` with ``render()``; with ``--check`` it exits 1 instead
    when the page differs (a test runs the check)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help=f"fail if {page.name} is stale")
    args = parser.parse_args()
    text = render()
    if args.check:
        if not page.exists() or page.read_text() != text:
            sys.exit(f"{page} is stale: run `.venv/bin/python scripts/{script}`")
        return
    page.write_text(text)
    print(f"wrote {page}")
