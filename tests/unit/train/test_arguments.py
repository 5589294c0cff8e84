"""The hyperparameters section goes to TRL under its own names, and TRL takes it as it is."""

from __future__ import annotations

import pytest

from agentcli.train.arguments import trainer_arguments
from agentcli.train.config import TrainConfig

BASE = {"data": "d.json", "model": "m", "out": "o"}


def test_every_hyperparameter_reaches_sft_config_by_its_own_name():
    from trl import SFTConfig

    config = TrainConfig(
        method="sft",
        hyperparameters={
            "per_device_train_batch_size": 3,
            "run_name": "r",
            "warmup_steps": 0.1,
            "optim": "sgd",
        },
        **BASE,
    )
    arguments = SFTConfig(**trainer_arguments(config))
    for name, value in config.hyperparameters:
        if value is not None:
            assert getattr(arguments, name) == (
                [] if (name, value) == ("report_to", "none") else value
            ), name
    assert arguments.activation_checkpointing is False  # CPU: off
    assert (arguments.bf16, arguments.fp16, arguments.use_cpu) == (False, False, True)


def test_dpo_gets_its_beta_and_bc_none():
    from trl import DPOConfig

    dpo = TrainConfig(method="dpo", **BASE)
    assert DPOConfig(**trainer_arguments(dpo)).beta == 0.1
    assert "beta" not in trainer_arguments(TrainConfig(method="bc", **BASE))


def test_a_gpu_precision_on_cpu_is_one_line():
    from agentcli.errors import UsageError

    with pytest.raises(UsageError, match="--dtype bf16 needs a GPU"):
        trainer_arguments(TrainConfig(method="bc", launch={"dtype": "bf16"}, **BASE))
