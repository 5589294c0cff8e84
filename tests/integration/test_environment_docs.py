"""The environment pages' commands run as written, in an empty directory."""

from __future__ import annotations

import json

from tests.support.docs import ROOT, bash_blocks, failure_text, run_block

DOCS = ROOT / "docs" / "environments"


def test_the_textcraft_page_names_goals_and_prompts_as_it_says(tmp_path):
    block = bash_blocks(DOCS / "textcraft.md", after="## Item ids")[0]
    run = run_block(block, tmp_path, timeout=600)
    assert run.returncode == 0, failure_text(run)

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
