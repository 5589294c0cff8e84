"""The environment pages' commands run as written, in an empty directory."""

from __future__ import annotations

import json
import socket

import pytest

from tests.support.docs import FIXED_PORTS, ROOT, bash_blocks, failure_text, run_block
from tests.support.openai_server import openai_server
from tests.support.webarena_server import shopper, webarena_server

pytestmark = FIXED_PORTS

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


def _busy(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_the_webarena_page_checks_and_evaluates_a_server_on_its_ports(tmp_path):
    block = bash_blocks(DOCS / "webarena.md")[0]
    ports = {"webarena": 8000, "model": 30000}  # the page's
    if any(_busy(port) for port in ports.values()):
        pytest.skip(f"the page's ports {sorted(ports.values())} are in use on this machine")
    with (
        webarena_server(port=ports["webarena"]) as server,
        openai_server(shopper, port=ports["model"]) as model,
    ):
        run = run_block(block, tmp_path, timeout=600)
        assert server.envs == {}  # every session closed again
    assert run.returncode == 0, failure_text(run)
    assert "verdict: PASS" in run.stdout
    assert {request.body["max_tokens"] for request in model.requests} == {512}
    metrics = tmp_path / "runs/eval/my-model/webarena/metrics.json"
    [overall] = json.loads(metrics.read_text())
    # the stand-in's even tasks ask for the price the model answers
    assert (overall["episodes"], overall["success_rate"], overall["errors"]) == (20, 0.5, 0)
