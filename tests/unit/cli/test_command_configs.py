"""Each command builds the config it should from its options (``--print-config``, in process),
and a policy's or teacher's kind follows from what is given, wherever it is given."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

from agentcli.cli.main import app
from agentcli.config import resolve_config
from agentcli.errors import ConfigError
from agentcli.policy import PolicyConfig
from agentcli.teacher import TeacherConfig
from agentcli.teacher.stages import CorrectConfig


def printed(*args: str) -> dict:
    result = CliRunner().invoke(app, [*args, "--print-config"])
    assert result.exit_code == 0, result.output
    return yaml.safe_load(result.stdout)


def test_rollout_options_land_in_their_sections():
    config = printed("rollout", "--env", "textcraft", "--model", "m", "--temperature", "0.5",
                     "--skip", "3", "--limit", "2", "--out", "o",
                     "view.history_steps=1")  # fmt: skip
    assert config["policy"]["kind"] == "local" and config["policy"]["model"] == "m"
    assert config["policy"]["temperature"] == 0.5
    assert (config["split"], config["skip"], config["limit"]) == ("train", 3, 2)
    assert config["view"]["history_steps"] == 1


def test_eval_defaults_to_held_out_items_and_an_output_per_env():
    config = printed("eval", "--env", "textcraft", "--base-url", "http://h/v1", "--model-name", "m")
    assert config["policy"]["kind"] == "openai" and config["split"] == "test"
    assert config["out"] == "runs/eval/m/textcraft"
    local = printed("eval", "--env", "textcraft", "--model", "models/tiny1")
    assert local["out"] == "runs/eval/models-tiny1/textcraft"
    iteration = printed("eval", "--env", "textcraft", "--model", "runs/x/iter1/model")
    assert iteration["out"] == "runs/eval/x-iter1-model/textcraft"


def test_collect_is_the_oracle_on_training_items():
    config = printed("collect", "--env", "babyai", "--out", "d.jsonl")
    assert config["policy"]["kind"] == "oracle" and config["split"] == "train"


def test_a_rollout_without_a_policy_is_refused_not_run_as_the_oracle():
    result = CliRunner().invoke(app, ["rollout", "--env", "textcraft", "--out", "o"])
    assert isinstance(result.exception, ConfigError)
    assert "--model DIR" in str(result.exception) and "--policy oracle" in str(result.exception)


def test_teacher_options_and_build_data_format_land_in_their_sections():
    config = printed("correct", "--env", "textcraft", "--rollout", "r", "--threshold", "0.5",
                     "--base-url", "http://h/v1", "--model-name", "m", "--dry-run")  # fmt: skip
    assert config["teacher"]["kind"] == "openai" and config["teacher"]["dry_run"] is True
    assert config["threshold"] == 0.5
    data = printed("build-data", "--method", "sft", "--iter", "1", "--run", "r",
                   "--format", "single-prompt", "--skip-uncorrected")  # fmt: skip
    assert data["view"]["format"] == "single-prompt" and data["keep_uncorrected"] is False


@pytest.mark.parametrize(
    ("given", "kind"),
    [({}, "oracle"), ({"concurrency": 4}, "oracle"),
     ({"base_url": "http://h/v1", "model_name": "m"}, "openai")],
)  # fmt: skip
def test_a_teacher_kind_follows_from_yaml_env_and_flags_alike(given, kind, tmp_path):
    config_file = tmp_path / "c.yaml"
    config_file.write_text(yaml.safe_dump({"env": "textcraft", "rollout": "r", "teacher": given}))
    from_yaml = resolve_config(CorrectConfig, config_file=config_file, dotenv=None)
    environ = {f"AGENTGYM_TEACHER__{key.upper()}": str(value) for key, value in given.items()}
    from_env = resolve_config(
        CorrectConfig, cli={"env": "textcraft", "rollout": "r"}, environ=environ, dotenv=None
    )
    flags = {f"teacher.{key}": value for key, value in given.items()}
    from_flags = resolve_config(
        CorrectConfig, cli={"env": "textcraft", "rollout": "r", **flags}, environ={}, dotenv=None
    )
    assert from_yaml.teacher.kind == from_env.teacher.kind == from_flags.teacher.kind == kind


def test_a_policy_kind_follows_from_what_is_given():
    assert PolicyConfig(model="m").kind == "local"
    assert PolicyConfig(base_url="http://h/v1", model_name="m").kind == "openai"
    assert PolicyConfig(kind="oracle").kind == "oracle"
    assert TeacherConfig().kind == "oracle"
