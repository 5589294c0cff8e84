"""A server of another env is refused at once, by `env check` and by a rollout alike."""

from __future__ import annotations

import pytest

from agentcli.errors import WrongServerError
from agentcli.policy import PolicyConfig
from agentcli.rollout import RolloutConfig, execute
from tests.support.cli import agentgym
from tests.support.servers import running_server


def test_env_check_of_another_envs_server_fails_in_one_line():
    with running_server("textcraft") as url:
        result = agentgym("env", "check", url, "--env", "babyai")
    assert result.returncode == 2 and "verdict: PASS" not in result.stdout
    assert result.stderr.strip().count("\n") == 0
    assert "serves textcraft, not babyai" in result.stderr


def test_a_rollout_on_another_envs_server_stops_before_any_episode(tmp_path):
    with running_server("textcraft") as url:
        config = RolloutConfig(env="babyai", env_server=[url], out=tmp_path / "e.jsonl",
                               policy=PolicyConfig(kind="oracle"))  # fmt: skip
        with pytest.raises(WrongServerError, match="pass --env textcraft"):
            execute(config)
    assert not (tmp_path / "e.jsonl").exists()
