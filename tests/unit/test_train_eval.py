"""``agentcli.train_eval``: the in-training eval built outside training, and checked before it."""

from __future__ import annotations

import pytest

from agentcli import train_eval
from agentcli.errors import UsageError
from agentcli.train import launch
from agentcli.train.config import TrainConfig
from tests.support.client_only import register_client_only_env


def config_for(tmp_path, env: str, **eval_settings) -> TrainConfig:
    items = tmp_path / "items.json"
    items.write_text('[{"item_id": "textcraft_0"}]')
    return TrainConfig(
        method="bc",
        data=tmp_path / "d.json",
        model=tmp_path / "m",
        out=tmp_path / "out",
        env=env,
        eval={"every": 1, "items": items, **eval_settings},
    )


def test_no_eval_asked_builds_no_evaluator(tmp_path):
    config = TrainConfig(method="bc", data="d.json", model="m", out=tmp_path)
    assert train_eval.checkpoint_evaluator(config) is None
    train_eval.check_eval_can_run(config)  # nothing to check


def test_an_eval_env_without_built_in_server_needs_one_before_training(tmp_path, monkeypatch):
    env = register_client_only_env(monkeypatch)
    with pytest.raises(
        UsageError, match="only a client for .*: run one and pass --env-server URL for the eval"
    ):
        train_eval.check_eval_can_run(config_for(tmp_path, env))
    train_eval.check_eval_can_run(config_for(tmp_path, env, env_server=["http://h:1"]))


def test_an_unknown_eval_env_or_missing_items_is_one_line(tmp_path):
    with pytest.raises(UsageError, match="did you mean 'textcraft'"):
        train_eval.check_eval_can_run(config_for(tmp_path, "textcraf"))
    with pytest.raises(UsageError, match="--eval-items .*no such file"):
        train_eval.check_eval_can_run(config_for(tmp_path, "textcraft", items=tmp_path / "no"))


def test_training_asked_to_evaluate_without_an_evaluator_refuses_at_once(tmp_path):
    config = config_for(tmp_path, "textcraft")
    assert train_eval.checkpoint_evaluator(config) is not None
    with pytest.raises(UsageError, match="agentcli.train_eval"):
        launch.train(config)  # before it looks at the model or the data
