"""grpo's config, groups, reward hook and resume rule, without training."""

from __future__ import annotations

import pytest
import yaml
from pydantic import ValidationError
from typer.testing import CliRunner

from agentcli.cli.main import app
from agentcli.config import dump_config
from agentcli.conversation import StudentView
from agentcli.errors import UsageError
from agentcli.records import Episode, Step
from agentcli.train.config import TrainConfig
from agentcli.train.grpo import trained_conversation, zero_variance_groups
from agentcli.train.launch import refuse_other_run
from agentcli.train.played import group_rewards, load_reward_hook

GRPO = {"method": "grpo", "model": "m", "out": "o", "grpo": {"envs": ["babyai-putnext"]}}


def test_flags_set_grpo_keys_and_a_step_is_one_group_by_default():
    result = CliRunner().invoke(
        app,
        ["train", "grpo", "--model", "m", "--out", "o", "--env", "textcraft", "--env",
         "babyai-putnext", "--split", "test", "--limit", "4", "--skip", "1", "--group", "4",
         "--max-turns", "5", "--max-new-tokens", "32", "--temperature", "0.7",
         "--zero-variance", "keep", "--reward", "shaping:bonus", "--beta", "0.04",
         "--max-steps", "9", "--lora", "r=8", "--print-config"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    config = TrainConfig.model_validate(yaml.safe_load(result.stdout))
    grpo = config.grpo
    assert grpo.envs == ["textcraft", "babyai-putnext"]
    assert (grpo.items.split, grpo.items.limit, grpo.items.skip) == ("test", 4, 1)
    assert (grpo.num_generations, grpo.max_turns, grpo.max_new_tokens) == (4, 5, 32)
    assert (grpo.temperature, grpo.zero_variance, grpo.reward) == (0.7, "keep", "shaping:bonus")
    hyperparameters = config.hyperparameters
    assert (hyperparameters.beta, hyperparameters.max_steps) == (0.04, 9)
    assert hyperparameters.per_device_train_batch_size == 4  # one group
    assert hyperparameters.learning_rate == 1e-6 and config.adapters.lora.r == 8


def test_grpo_defaults_and_refusals():
    config = TrainConfig(**GRPO)
    assert config.hyperparameters.beta == 0.0 and config.grpo.zero_variance == "drop"
    assert config.hyperparameters.per_device_train_batch_size == 8
    for change, message in [
        ({"data": "d.json"}, "not --data"),
        ({"grpo": {}}, "--env NAME"),
        ({"hyperparameters": {"per_device_train_batch_size": 3}}, "whole groups"),
        ({"rendering": {"template": "llama2"}}, "chat template"),
        ({"grpo": {"envs": ["textcraft"], "view": {"history_steps": 2}}}, "multi-turn"),
    ]:
        with pytest.raises(ValidationError, match=message):
            TrainConfig(**{**GRPO, **change})
    with pytest.raises(ValidationError, match="for grpo"):
        TrainConfig(method="sft", data="d.json", model="m", out="o", grpo={"envs": ["textcraft"]})
    with pytest.raises(ValidationError, match="--data FILE"):
        TrainConfig(method="sft", model="m", out="o")


def test_only_whole_groups_whose_scored_episodes_agree_are_flagged():
    ids = ["a", "a", "b", "b", "c", "c", "d", "d", "e", "e"]
    rewards = [1.0, 1.0, 0.0, 1.0, None, None, None, 1.0, 0.0, 0.0]
    assert zero_variance_groups(ids, rewards, 2) == [
        True, True, False, False, True, True, True, True, True, True,
    ]  # fmt: skip
    assert zero_variance_groups(["a", "b"], [0.0, 0.0], 2) == [False, False]  # two items
    assert zero_variance_groups(ids[:3], [0.0, 0.0, 0.0], 2) == [False] * 3  # a split group


def episode(*actions: str, end: str = "done", reward: float = 1.0) -> Episode:
    steps = [Step(observation=f"o{i}", reason="r", action=a) for i, a in enumerate(actions)]
    return Episode(
        item_id="textcraft_1", env="textcraft", split="train", instruction="craft",
        steps=steps, final_observation="last", reward=reward, success=True,
        n_steps=len(steps), meta={"end_reason": end},
    )  # fmt: skip


def test_rewards_come_from_the_hook_and_env_errors_are_unscored(tmp_path, monkeypatch):
    (tmp_path / "shaping.py").write_text("def bonus(episode):\n    return 10 * episode.n_steps\n")
    monkeypatch.chdir(tmp_path)
    hook = load_reward_hook("shaping:bonus")
    played = [episode("a", "b"), episode("a", end="error")]
    assert group_rewards(played, hook) == [20.0, None]
    assert group_rewards(played, None) == [1.0, None]
    for spec, message in [("shaping", "module:function"), ("nowhere:f", "cannot import"),
                          ("shaping:missing", "has no missing")]:  # fmt: skip
        with pytest.raises(UsageError, match=message):
            load_reward_hook(spec)


def test_a_reply_without_an_action_is_not_trained_nor_the_final_observation():
    messages = trained_conversation(episode("a", "", "c"), StudentView())
    assert [m.loss for m in messages if m.role == "assistant"] == [False, True, False, True]
    assert messages[-1].role == "assistant"


def test_resuming_with_other_settings_names_them(tmp_path):
    config = TrainConfig(**{**GRPO, "out": tmp_path})
    dump_config(config, config.config_path)
    refuse_other_run(config.model_copy(update={"resume": True}))  # the same run: resumes
    changed = TrainConfig(**{**GRPO, "out": tmp_path, "grpo": {"envs": ["textcraft"]}})
    with pytest.raises(UsageError, match=r"grpo\.envs: \['babyai-putnext'\] → \['textcraft'\]"):
        refuse_other_run(changed)
