"""The environment pages' commands run as written, in an empty directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.integration.test_readme import section_block

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs" / "environments"


def test_the_textcraft_page_names_goals_and_prompts_as_it_says(tmp_path):
    block = section_block((DOCS / "textcraft.md").read_text(encoding="utf-8"), "## Item ids")
    environ = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        # this checkout's code, even where the installed agentgym is another's
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=environ,
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]

    def episodes(run_dir: str) -> list[dict]:
        lines = (tmp_path / run_dir / "episodes.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines]

    by_goal = {e["item_id"]: e for e in episodes("runs/by-goal")}
    assert set(by_goal) == {"textcraft_203", "textcraft_103"}
    assert by_goal["textcraft_203"]["steps"][0]["observation"].endswith(
        "Goal: craft dark oak sign."
    )
    prompted = episodes("runs/agentgym-prompt")
    assert len(prompted) == 2 and all(e["success"] for e in prompted)
    assert all(
        e["instruction"].startswith(
            "You are given few useful crafting recipes to craft items in Minecraft."
        )
        for e in prompted
    )
    written = json.loads((tmp_path / "agentgym.json").read_text())
    assert written[0]["conversations"][0]["value"] == prompted[0]["instruction"]
