"""``policy.actions: admissible`` on a real alfworld server: a student whose every action is a
character off the expert's wins once its actions are mapped to the nearest listed one, and
loses as written; each replacement is recorded, and a rerun in the other mode is refused."""

from __future__ import annotations

import importlib.util

import pytest

from agentcli.errors import UsageError
from agentcli.policy import PolicyConfig
from agentcli.records import Episode
from agentcli.rollout import RolloutConfig, execute
from tests.support.garbling_expert import GarblingExpert, play_garbled
from tests.support.servers import running_server

pytestmark = [
    pytest.mark.alfworld,
    pytest.mark.skipif(
        importlib.util.find_spec("alfworld") is None,
        reason="the alfworld extra is not installed (pip install 'agentgym[alfworld]')",
    ),
]

TRAIN_ITEMS = [100_000, 100_001]


def misspelt(action: str) -> str:
    """The action with its first letter doubled: one character from it, two or more from
    every other action (``ggo to desk 1``)."""
    return action[0] + action


def _play(url: str, out, actions: str) -> list[Episode]:
    expert = GarblingExpert(misspelt, fallback="look")
    return play_garbled("alfworld", url, out, expert, TRAIN_ITEMS, actions)


def test_a_misspelling_student_wins_within_the_admissible_actions_and_loses_free(tmp_path):
    with running_server("alfworld") as url:
        admissible = _play(url, tmp_path / "admissible.jsonl", "admissible")
        free = _play(url, tmp_path / "free.jsonl", "free")
    assert [episode.success for episode in admissible] == [True, True]
    assert [episode.success for episode in free] == [False, False]
    assert "replaced_actions" not in free[0].meta
    for episode in admissible:
        replaced = episode.meta["replaced_actions"]
        assert len(replaced) == episode.n_steps  # every action was a character off
        for record, step in zip(replaced, episode.steps, strict=True):
            assert record["action"] == step.action  # the step holds what the env was sent
            assert record["reply"] == misspelt(step.action)
            assert step.action in step.candidate_actions


def test_the_action_mode_is_a_setting_a_rerun_must_keep(tmp_path):
    out = tmp_path / "episodes.jsonl"

    def collect(actions: str, limit: int) -> RolloutConfig:
        policy = PolicyConfig(kind="oracle", actions=actions)
        return RolloutConfig(env="alfworld", out=out, policy=policy, split="train", limit=limit,
                             max_rounds=2)  # fmt: skip

    assert execute(collect("admissible", 1)).finished == 1
    with pytest.raises(UsageError, match="actions"):
        execute(collect("free", 2))
    assert execute(collect("admissible", 2)).skipped == 1
