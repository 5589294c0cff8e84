"""TrainConfig checks, and the accelerate command line the launcher builds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from agentcli.train.config import TrainConfig, TrainSettings, TrainTarget
from agentcli.train.launch import accelerate_command

BASE = {"data": "d.json", "model": "m", "out": "o"}


def test_the_config_is_the_target_then_the_settings_then_the_eval_and_grpo():
    assert list(TrainConfig.model_fields) == [
        *TrainTarget.model_fields,
        *TrainSettings.model_fields,
        "eval",
        "grpo",
    ]


def test_eval_every_needs_items_and_an_env():
    with pytest.raises(ValidationError, match="--eval-items"):
        TrainConfig(method="bc", eval={"every": 1}, **BASE)
    config = TrainConfig(method="bc", eval={"every": 1, "items": "t.json"}, env="textcraft", **BASE)
    assert config.eval.every == 1 and config.eval.enabled


def test_unknown_lora_key_is_refused():
    with pytest.raises(ValidationError, match="rank"):
        TrainConfig(method="sft", adapters={"lora": "rank=4"}, **BASE)


def test_the_method_recipe_fills_only_what_is_unset():
    config = TrainConfig(method="sft", hyperparameters={"learning_rate": 1e-4}, **BASE)
    assert config.hyperparameters.learning_rate == 1e-4
    assert config.hyperparameters.lr_scheduler_type == "cosine"  # sft's


def test_two_processes_on_cpu_use_multi_gpu_not_a_multi_cpu_config():
    config = TrainConfig(method="bc", launch={"num_processes": 2}, **BASE)
    command = accelerate_command(config, "agentcli.train.worker", port=1234)
    assert command[:3] == [sys.executable, "-m", "accelerate.commands.launch"]
    assert "--multi_gpu" in command
    assert command[command.index("--num_processes") + 1] == "2"
    assert command[-3:] == ["-m", "agentcli.train.worker", str(Path("o") / "train_config.yaml")]
    assert config.distributed


def test_an_accelerate_config_file_replaces_the_built_in_flags():
    config = TrainConfig(
        method="bc", launch={"accelerate_config": "configs/accelerate/ddp.yaml"}, **BASE
    )
    command = accelerate_command(config, "agentcli.train.worker", port=1234)
    assert command[command.index("--config_file") + 1] == "configs/accelerate/ddp.yaml"
    assert "--multi_gpu" not in command


def test_one_process_runs_in_this_process():
    assert not TrainConfig(method="bc", launch={"num_processes": 1}, **BASE).distributed
