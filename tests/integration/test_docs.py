"""docs/ as its reader meets it. Every ``agentgym`` line of every page's bash blocks is a valid
command: its config resolves (``--print-config``) from a directory laid out as the page
assumes. The blocks that can run here offline run as written, in order, on a temp dir, after
what the page assumes was done before ("given"); the rest need a GPU, an API key, a foreign
server or an hour (the quickstart, which ``make demo`` runs).
"""

from __future__ import annotations

import json
import shlex
import shutil
import urllib.request
from pathlib import Path

import pytest

from agentcli.run_layout import RunLayout
from tests.support.cli import agentgym
from tests.support.docs import (
    FIXED_PORTS,
    PLACEHOLDER,
    ROOT,
    bash_blocks,
    failure_text,
    run_block,
    run_page,
)
from tests.support.random_policy import RandomPolicy, rollout
from tests.support.runs import corrected_run, evaluated_run
from tests.support.view_server import serving

pytestmark = FIXED_PORTS

PAGES = sorted((ROOT / "docs").rglob("*.md"))
# Commands whose options resolve to a config, which --print-config shows without running.
CONFIGURED = {"collect", "rollout", "eval", "annotate", "extract-state", "correct", "build-data",
              "iterate", "env serve", "train bc", "train sft", "train dpo",
              "train grpo"}  # fmt: skip
# Files the pages name as the reader's own.
READERS_FILES = {"my.yaml": ROOT / "configs" / "quickstart.yaml"}


def documented_commands() -> list[tuple[str, list[str]]]:
    """(page, arguments) of each agentgym line of the docs' bash blocks."""
    found = []
    for page in PAGES:
        for block in bash_blocks(page):
            for line in block.splitlines():
                if line.startswith("agentgym ") and PLACEHOLDER not in line:
                    arguments = shlex.split(line, comments=True)[1:]
                    found.append((page.name, [a for a in arguments if a != "&"]))
    return found


def _command_name(arguments: list[str]) -> str:
    group = " ".join(arguments[:2])
    return group if group in CONFIGURED else arguments[0]


@pytest.fixture
def readers_directory(tmp_path: Path) -> Path:
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    for name, source in READERS_FILES.items():
        shutil.copy(source, tmp_path / name)
    return tmp_path


@pytest.mark.slow
def test_every_configured_command_of_the_docs_resolves(readers_directory):
    commands = [(page, args) for page, args in documented_commands()
                if _command_name(args) in CONFIGURED]  # fmt: skip
    assert len(commands) > 25 and {page for page, _ in commands} >= {"train.md", "rollout.md"}
    for page, arguments in commands:
        shown = agentgym(*arguments, "--print-config", cwd=readers_directory)
        assert shown.returncode == 0, f"{page}: agentgym {shlex.join(arguments)}: {shown.stderr}"
        assert not any(readers_directory.glob("runs")), f"{page}: --print-config wrote a run"


@pytest.mark.slow
def test_env_page_serves_and_checks(tmp_path):
    out = run_page("env.md", tmp_path)
    assert "textcraft" in out and "verdict: PASS" in out


@pytest.mark.slow
def test_oracle_page_annotates_extracts_and_corrects(tmp_path):
    given = agentgym("collect", "--env", "textcraft", "--limit", "3",
                     "--out", "runs/x/demos.jsonl", cwd=tmp_path)  # fmt: skip
    assert given.returncode == 0, given.stderr
    # items a random student loses (the page's correct takes failed episodes)
    rollout("babyai", [24, 32, 40], tmp_path / "runs/x/iter0/rollout/episodes.jsonl",
            RandomPolicy(seed=0))  # fmt: skip
    run_page("oracle.md", tmp_path)
    for made in ("demos.annotated.jsonl", "privileged_state.jsonl",
                 "iter0/correction/corrections.jsonl"):  # fmt: skip
        assert (tmp_path / "runs/x" / made).is_file(), made


@pytest.mark.slow
def test_build_data_page_builds_every_set(tmp_path):
    run = corrected_run(RunLayout(tmp_path / "runs" / "demo"), "textcraft", range(1, 21, 2),
                        {0: [2, 5, 8, 11], 1: [3, 6, 9]})  # fmt: skip
    out = run_page("build-data.md", tmp_path)
    assert len(out.strip().splitlines()) == 4
    for k, name in ((0, "sft.jsonl"), (1, "sft.jsonl"), (2, "dpo.jsonl"), (1, "bc.json")):
        assert (run.data(k) / name).is_file(), (k, name)


@pytest.mark.slow
def test_rl_page_trains_the_tiny_model_with_grpo(tmp_path):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    out = run_page("rl.md", tmp_path)
    assert "model written to runs/grpo/model" in out
    assert (tmp_path / "runs" / "grpo" / "model" / "model.safetensors").is_file()


@pytest.mark.slow
def test_rl_page_trains_and_evaluates_with_train_grpo(tmp_path):
    block = bash_blocks(ROOT / "docs" / "rl.md", after="## `agentgym train grpo`")[0]
    run = run_block(block, tmp_path, timeout=600)
    assert run.returncode == 0, f"rl.md: {failure_text(run)}"
    assert "grpo: 2 steps (at step 2)" in run.stdout
    assert (tmp_path / "runs" / "grpo-babyai" / "model.safetensors").is_file()
    assert len((tmp_path / "runs" / "grpo-babyai" / "episodes.jsonl").read_text().splitlines()) == 4


@pytest.mark.slow
def test_openenv_page_plays_an_item_with_openenvs_client(tmp_path):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    out = run_page("openenv.md", tmp_path)
    assert "Crafted 4 minecraft:birch_planks  (reward 1.0)" in out
    assert "done True, success True, 2 steps on textcraft_3" in out


@pytest.mark.slow
def test_view_page_exports_then_serves(tmp_path):
    evaluated_run(tmp_path / "runs" / "quickstart" / "seed0")
    exports, serves = bash_blocks(ROOT / "docs" / "view.md")[:2]
    run = run_block(exports, tmp_path, timeout=300)
    assert run.returncode == 0, f"view.md: {failure_text(run)}"
    for made in ("runs/quickstart-pages/index.html", "rollout-pages/data/overview.js"):
        assert (tmp_path / made).is_file(), made
    # a view serves until stopped: each is started as written, asked for its overview, stopped
    for line in serves.splitlines():
        arguments = shlex.split(line, comments=True)
        with (
            serving(arguments[1:], cwd=tmp_path) as served,
            urllib.request.urlopen(served.url + "api/overview") as answer,
        ):
            assert json.loads(answer.read())["datasets"], line
