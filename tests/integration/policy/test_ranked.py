"""``policy.actions: ranked`` and ``constrained`` on a real alfworld server (which lists its
admissible actions): the tiny model chooses every action among those listed, by scoring them,
where writing them it names none; settings that cannot rank, and envs whose servers list no
actions, are refused before anything runs."""

from __future__ import annotations

import importlib.util

import pytest
from pydantic import ValidationError

from agentcli.conversation import StudentView
from agentcli.data.jsonl import read_records
from agentcli.errors import UsageError
from agentcli.policy import PolicyConfig
from agentcli.records import Episode
from agentcli.rollout import RolloutConfig, execute

NO_REASONS = StudentView(reasons=False, instruction=False, format="single-prompt")


def rollout(out, policy: PolicyConfig, view: StudentView = NO_REASONS) -> RolloutConfig:
    return RolloutConfig(env="alfworld", split="train", limit=2, concurrency=2, max_rounds=4,
                         out=out, policy=policy, view=view)  # fmt: skip


@pytest.mark.alfworld
@pytest.mark.skipif(
    importlib.util.find_spec("alfworld") is None,
    reason="the alfworld extra is not installed (pip install 'agentgym[alfworld]')",
)
def test_every_action_of_a_model_choosing_among_the_list_is_one_the_env_listed(
    tiny_model, tmp_path
):
    free = PolicyConfig(model=tiny_model, max_new_tokens=4)
    assert execute(rollout(tmp_path / "free", free)).finished == 2
    # a random model writing four tokens names no listed action: choosing is what does
    written = read_records(tmp_path / "free" / "episodes.jsonl", Episode)
    assert not any(s.action in s.candidate_actions for e in written for s in e.steps)
    for mode in ("ranked", "constrained"):
        choosing = PolicyConfig(model=tiny_model, actions=mode, max_new_tokens=4)
        assert execute(rollout(tmp_path / mode, choosing)).finished == 2
        episodes = read_records(tmp_path / mode / "episodes.jsonl", Episode)
        steps = [step for episode in episodes for step in episode.steps]
        assert len(steps) == 8 and all(step.action in step.candidate_actions for step in steps)
        assert all(episode.meta["completion_tokens"] == 0 for episode in episodes)


def test_a_policy_that_cannot_score_replies_is_refused(tmp_path):
    with pytest.raises(ValidationError, match="actions ranked .* pass --model DIR"):
        rollout(tmp_path, PolicyConfig(kind="oracle", actions="ranked"))


def test_a_view_whose_replies_start_with_a_reason_is_refused(tiny_model, tmp_path):
    policy = PolicyConfig(model=tiny_model, actions="ranked")
    with pytest.raises(ValidationError, match="view with reasons"):
        rollout(tmp_path, policy, StudentView(reasons=True))


@pytest.mark.parametrize("kind, actions", [("oracle", "admissible"), ("local", "ranked")])
def test_an_env_whose_server_lists_no_actions_refuses_both_modes(
    tiny_model, tmp_path, kind, actions
):
    policy = PolicyConfig(kind=kind, model=tiny_model if kind == "local" else None, actions=actions)
    config = RolloutConfig(env="babyai-putnext", split="train", limit=1, out=tmp_path / "out.jsonl",
                           policy=policy, view=NO_REASONS)  # fmt: skip
    with pytest.raises(UsageError, match=f"sends no list .* actions {actions} would act as free"):
        execute(config)
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("actions", ["ranked", "constrained"])
def test_an_env_whose_listed_actions_hold_free_words_refuses_choosing_among_them(
    tiny_model, tmp_path, actions
):
    policy = PolicyConfig(model=tiny_model, actions=actions)
    config = RolloutConfig(env="webshop", split="train", limit=1, out=tmp_path / "out.jsonl",
                           policy=policy, view=NO_REASONS)  # fmt: skip
    with pytest.raises(UsageError, match=f"actions {actions} cannot score .* admissible or free"):
        execute(config)
    assert not (tmp_path / "out.jsonl").exists()
