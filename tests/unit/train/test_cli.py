"""`agentgym train …` builds the TrainConfig its options, file and overrides say."""

from __future__ import annotations

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
        "batch_size=8",
    )  # fmt: skip
    assert config["method"] == "bc" and config["env"] == "textcraft"
    assert config["learning_rate"] == 0.001 and config["batch_size"] == 8
    assert config["lora"]["r"] == 64 and config["lora"]["alpha"] == 128
    assert config["lr_scheduler"] == "linear" and config["max_grad_norm"] == 1.0  # bc's recipe


def test_each_method_fills_in_its_own_recipe():
    sft = printed_config("sft", *REQUIRED)
    assert (sft["learning_rate"], sft["lr_scheduler"], sft["warmup_steps"]) == (3e-5, "cosine", 10)
    assert sft["max_grad_norm"] == 0.3
    dpo = printed_config("dpo", *REQUIRED)
    assert (dpo["learning_rate"], dpo["beta"]) == (5e-7, 0.1)


def test_a_config_file_is_overridden_by_options(tmp_path):
    file = tmp_path / "train.yaml"
    file.write_text("data: d.json\nmodel: m\nout: o\nepochs: 3\nresume: true\nbatch_size: 2\n")
    config = printed_config("bc", "--config", str(file), "--batch-size", "16")
    assert config["epochs"] == 3 and config["batch_size"] == 16
    assert config["resume"] is True  # a flag left off does not override the file


def test_malformed_lora_is_one_line_config_error():
    result = CliRunner().invoke(app, ["train", "sft", *REQUIRED, "--lora", "r64", "--print-config"])
    assert isinstance(result.exception, ConfigError)
    assert "r=64,alpha=128" in str(result.exception) and "\n" not in str(result.exception)


def test_options_of_another_method_are_refused():
    result = CliRunner().invoke(app, ["train", "bc", *REQUIRED, "--beta", "0.2", "--print-config"])
    assert isinstance(result.exception, ConfigError)
    assert "--beta is for dpo" in str(result.exception)
