"""`agentgym train …` builds the TrainConfig its options, file and overrides say."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

from agentcli.cli.main import app
from agentcli.errors import ConfigError

REQUIRED = ["--data", "d.json", "--model", "m", "--out", "o"]


def printed_config(*args: str) -> dict:
    result = CliRunner().invoke(app, ["train", *args, "--print-config"])
    assert result.exit_code == 0, result.output
    return yaml.safe_load(result.stdout)


def test_options_and_overrides_build_the_config_with_method_defaults():
    config = printed_config(
        "bc", *REQUIRED, "--task", "textcraft", "--lr", "0.001", "--lora", "r=64,alpha=128",
        "hyperparameters.per_device_train_batch_size=8",
    )  # fmt: skip
    hyperparameters = config["hyperparameters"]
    assert config["method"] == "bc" and config["env"] == "textcraft"
    assert hyperparameters["learning_rate"] == 0.001
    assert hyperparameters["per_device_train_batch_size"] == 8
    assert config["adapters"]["lora"]["r"] == 64 and config["adapters"]["lora"]["alpha"] == 128
    # bc's recipe
    assert (hyperparameters["lr_scheduler_type"], hyperparameters["max_grad_norm"]) == (
        "linear",
        1.0,
    )


def test_each_flag_sets_its_nested_key():
    config = printed_config(
        "sft", *REQUIRED, "--epochs", "2", "--batch-size", "8", "--grad-accum", "2",
        "--lr-scheduler", "constant", "--warmup-steps", "0.1", "--weight-decay", "0.01",
        "--optim", "sgd",
        "--max-grad-norm", "0.5", "--seed", "7", "--logging-steps", "5", "--save-steps", "50",
        "--report-to", "none", "--wandb-project", "p", "--run-name", "r",
        "--template", "llama2", "--max-length", "512", "--overflow", "drop",
        "--batching", "padded", "--no-merge", "--save-every", "1",
        "--eval-every", "1", "--eval-items", "t.json", "--env", "textcraft",
        "--env-server", "http://127.0.0.1:1", "--max-rounds", "3",
        "--num-processes", "2", "--accelerate-config", "a.yaml", "--dtype", "fp32",
    )  # fmt: skip
    assert config["hyperparameters"] == {
        "num_train_epochs": 2.0, "per_device_train_batch_size": 8,
        "gradient_accumulation_steps": 2, "learning_rate": 3e-5, "lr_scheduler_type": "constant",
        "warmup_steps": 0.1, "optim": "sgd", "weight_decay": 0.01, "max_grad_norm": 0.5, "seed": 7,
        "activation_checkpointing": None, "dataloader_num_workers": 0, "logging_steps": 5,
        "save_steps": 50, "report_to": "none", "run_name": "r", "project": "p", "beta": None,
        "max_steps": None, "sft_weight": None,
    }  # fmt: skip
    assert config["rendering"] == {
        "template": "llama2", "max_length": 512, "overflow": "drop", "batching": "padded",
        "share_prefix": True,
    }  # fmt: skip
    assert config["adapters"]["merge"] is False and config["saving"] == {"every": 1}
    assert (config["eval"]["every"], config["eval"]["items"]) == (1, "t.json")
    assert config["eval"]["env_server"] == ["http://127.0.0.1:1"]
    assert config["eval"]["max_rounds"] == 3
    assert config["launch"] == {"num_processes": 2, "accelerate_config": "a.yaml", "dtype": "fp32"}


def test_each_method_fills_in_its_own_recipe():
    sft = printed_config("sft", *REQUIRED)["hyperparameters"]
    assert (sft["learning_rate"], sft["lr_scheduler_type"], sft["warmup_steps"]) == (
        3e-5,
        "cosine",
        10,
    )
    assert sft["max_grad_norm"] == 0.3
    dpo = printed_config("dpo", *REQUIRED)["hyperparameters"]
    assert (dpo["learning_rate"], dpo["beta"]) == (5e-7, 0.1)


def test_a_config_file_is_overridden_by_options(tmp_path):
    file = tmp_path / "train.yaml"
    file.write_text(
        "data: d.json\nmodel: m\nout: o\nresume: true\n"
        "hyperparameters: {num_train_epochs: 3, per_device_train_batch_size: 2}\n"
    )
    config = printed_config("bc", "--config", str(file), "--batch-size", "16")
    assert config["hyperparameters"]["num_train_epochs"] == 3
    assert config["hyperparameters"]["per_device_train_batch_size"] == 16
    assert config["resume"] is True  # a flag left off does not override the file


def test_malformed_lora_is_one_line_config_error():
    result = CliRunner().invoke(app, ["train", "sft", *REQUIRED, "--lora", "r64", "--print-config"])
    assert isinstance(result.exception, ConfigError)
    assert "r=64,alpha=128" in str(result.exception) and "\n" not in str(result.exception)


def help_of(method: str) -> str:
    result = CliRunner().invoke(app, ["train", method, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("method", ["bc", "sft", "dpo"])
def test_each_method_lists_only_the_options_it_takes(method):
    text = help_of(method)
    rendering = ("--template", "--max-length", "--overflow", "--batching")
    if method == "dpo":
        assert "--beta" in text and not any(flag in text for flag in rendering)
    else:
        assert "--beta" not in text and all(flag in text for flag in rendering)
    for shared in ("--epochs", "--lr", "--lora", "--eval-every", "--num-processes", "--resume"):
        assert shared in text


def test_choice_options_list_their_values():
    text = help_of("sft")
    for values in (
        "chat|llama2|agentgym-bc",
        "truncate_left|drop",
        "none|tensorboard|wandb|trackio",
        "auto|padding_free|grouped|padded",
        "auto|bf16|fp16|fp32",
        "linear|cosine",
    ):
        assert values in text  # fmt: skip
    result = CliRunner().invoke(app, ["train", "sft", *REQUIRED, "--template", "llama3"])
    assert result.exit_code == 2 and "llama3" in result.output


def test_options_of_another_method_are_refused():
    result = CliRunner().invoke(app, ["train", "bc", *REQUIRED, "--beta", "0.2", "--print-config"])
    assert result.exit_code == 2 and "--beta" in result.output  # bc has no such option
    result = CliRunner().invoke(
        app, ["train", "bc", *REQUIRED, "hyperparameters.beta=0.2", "--print-config"]
    )
    assert isinstance(result.exception, ConfigError)
    assert "--beta is for dpo" in str(result.exception)
    result = CliRunner().invoke(
        app, ["train", "dpo", *REQUIRED, "rendering.max_length=64", "--print-config"]
    )
    assert isinstance(result.exception, ConfigError)
    assert "rendering.max_length is for bc/sft" in str(result.exception)
    result = CliRunner().invoke(
        app, ["train", "sft", *REQUIRED, "hyperparameters.sft_weight=1", "--print-config"]
    )
    assert isinstance(result.exception, ConfigError)
    assert "--sft-weight is dpo's" in str(result.exception)
    result = CliRunner().invoke(
        app, ["train", "dpo", *REQUIRED, "--sft-weight", "0.5", "--print-config"]
    )
    assert result.exit_code == 0 and "sft_weight: 0.5" in result.output
