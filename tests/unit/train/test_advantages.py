"""Group-relative advantages: GRPO's per episode, GiGPO's per anchor state, and how a step's
sample combines them."""

from __future__ import annotations

import math

import pytest

from agentcli.train.advantages import discounted_return, flat_groups, group_relative
from agentcli.train.config import GrpoSettings
from agentcli.train.stepwise import (
    StepSample,
    episode_weighted,
    sample_advantages,
    trained_samples,
)


def test_an_episode_is_scored_against_its_own_group_only():
    rewards = [1.0, 0.0, 0.5, 0.5]
    assert group_relative(rewards, [0, 0, 1, 1], "none") == [0.5, -0.5, 0.0, 0.0]
    scaled = group_relative(rewards, [0, 0, 1, 1], "std")
    assert scaled[0] == pytest.approx(1.0, abs=1e-5) and scaled[1] == pytest.approx(-1.0, abs=1e-5)
    assert scaled[2:] == [0.0, 0.0]  # a flat group carries no signal


def test_an_unscorable_episode_gets_nothing_and_leaves_its_groups_mean_alone():
    assert group_relative([None, 1.0, 0.0], [0, 0, 0], "none") == [0.0, 0.5, -0.5]
    assert group_relative([None, 1.0], [0, 0], "none") == [0.0, 0.0]  # one scored: no group


def test_flat_groups_are_those_whose_scored_episodes_agree():
    assert flat_groups([1.0, 1.0, 0.0, 1.0, None, 0.0], [0, 0, 1, 1, 2, 2]) == {
        0: True, 1: False, 2: True,
    }  # fmt: skip


def test_a_steps_return_is_the_episodes_reward_discounted_by_the_steps_left():
    assert discounted_return(1.0, 0, 0.9) == 1.0
    assert discounted_return(1.0, 2, 0.9) == pytest.approx(0.81)
    assert discounted_return(None, 2, 0.9) is None


def sample(episode: int, group: int, observation: str, steps_to_end: int) -> StepSample:
    return StepSample(episode, (group, observation), steps_to_end, [1, 2], [0, 1])


def test_gigpo_adds_the_steps_return_against_the_other_steps_from_the_same_state():
    """Two episodes of one item start from the same room (an anchor group of two); the first
    then wins in one more step, the second loses after two. The winner's first step is credited
    beyond its episode's advantage, the loser's debited; steps from states reached once are not."""
    samples = [
        sample(0, 0, "start", 1), sample(0, 0, "near the box", 0),
        sample(1, 0, "start", 2), sample(1, 0, "lost", 1), sample(1, 0, "more lost", 0),
    ]  # fmt: skip
    rewards = [1.0, 0.0]
    settings = GrpoSettings(num_generations=2, unit="step", normalize="none")
    assert sample_advantages(samples, rewards, settings) == [0.5, 0.5, -0.5, -0.5, -0.5]
    gigpo = settings.model_copy(update={"advantage": "gigpo", "gamma": 0.9, "step_weight": 2.0})
    advantages = sample_advantages(samples, rewards, gigpo)
    # the anchor "start": returns 0.9 and 0.0, centred ±0.45, weighted by 2
    assert advantages[0] == pytest.approx(0.5 + 0.9) and advantages[2] == pytest.approx(-0.5 - 0.9)
    assert advantages[1] == 0.5 and advantages[3:] == [-0.5, -0.5]


def test_anchor_groups_do_not_cross_items():
    samples = [sample(0, 0, "start", 0), sample(1, 1, "start", 0)]  # two items, group size 1
    settings = GrpoSettings(num_generations=2, unit="step", advantage="gigpo", normalize="none")
    rewards = [1.0, 0.0]
    # each episode its own group of one (positions 0 and 1 are one group of 2 by position,
    # but the samples name different groups): no anchor group forms
    advantages = sample_advantages(samples, rewards, settings)
    assert advantages == [0.5, -0.5]


def test_weighting_episodes_gives_a_long_lost_episode_the_weight_of_one_episode():
    """A group of two: won in one step, lost in three. Averaged over tokens, the loss pushes
    the moves down on the whole (three −0.5s against one +0.5); weighted by episodes, the won
    and the lost episode pull equally, and the update keeps its mean weight."""
    samples = [sample(0, 0, "start", 0), *(sample(1, 0, f"s{t}", 2 - t) for t in range(3))]
    settings = GrpoSettings(num_generations=2, unit="step", normalize="none")
    trained = list(zip(samples, sample_advantages(samples, [1.0, 0.0], settings), strict=True))
    assert sum(advantage for _, advantage in trained) == pytest.approx(-1.0)
    weighted = episode_weighted(trained)
    assert [s for s, _ in weighted] == samples
    assert weighted[0][1] == pytest.approx(1.0)
    assert [a for _, a in weighted[1:]] == pytest.approx([-1 / 3] * 3)
    assert sum(abs(a) for _, a in weighted) == pytest.approx(sum(abs(a) for _, a in trained))
    assert episode_weighted([]) == []


def test_negatives_drop_trains_only_the_samples_that_did_better_than_their_group():
    """A group of three with one win: the winner's step is trained, the two lost ones are
    not (with keep, their negative advantages are); a flat group's zeros follow zero_variance."""
    samples = [sample(0, 0, "a", 0), sample(1, 0, "b", 0), sample(2, 0, "c", 0)]
    samples += [sample(3, 1, "d", 0), sample(4, 1, "e", 0), sample(5, 1, "f", 0)]
    rewards = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    settings = GrpoSettings(num_generations=3, unit="step", normalize="none")
    advantages = sample_advantages(samples, rewards, settings)
    assert [s for s, _ in trained_samples(samples, advantages, settings)] == samples[:3]
    dropping = settings.model_copy(update={"negatives": "drop"})
    assert trained_samples(samples, advantages, dropping) == [(samples[0], pytest.approx(2 / 3))]
    keeping_zeros = dropping.model_copy(update={"zero_variance": "keep"})
    assert [s for s, _ in trained_samples(samples, advantages, keeping_zeros)] == [
        samples[0], *samples[3:],
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"advantage": "gigpo"}, "add --unit step"),
        ({"unit": "step", "gamma": 0.5}, "gamma is gigpo's"),
        ({"unit": "step", "step_weight": 0.5}, "step_weight is gigpo's"),
        ({"weighting": "episodes"}, "add --unit step"),
        ({"negatives": "drop"}, "add --unit step"),
    ],
)
def test_settings_that_mean_nothing_together_are_refused(given, message):
    with pytest.raises(ValueError, match=message):
        GrpoSettings(**given)


def test_std_normalisation_is_finite_for_a_nearly_flat_group():
    advantages = group_relative([1.0, 1.0 + 1e-12], [0, 0], "std")
    assert all(math.isfinite(value) for value in advantages)
