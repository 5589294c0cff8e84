"""Group-relative advantages of step-level policy optimisation (``agentcli.train.steps``).

GRPO's: an episode's reward against the other episodes of its group (the same item played
``--group`` times by the same model), every step of the episode taking its episode's value.
GiGPO's (step-level credit): the steps of a group's episodes that start from the same state
(anchor states: the same observation) form a group of their own, and a step's discounted
return against the others of its anchor group says whether the action taken there was better
than the others taken there. A step's advantage is its episode's plus ``step_weight`` times its
anchor group's.

Normalisation: ``std`` divides by the group's standard deviation (GRPO's), ``none`` keeps the
difference from the group's mean (GiGPO's and Dr. GRPO's choice: no bias toward groups of
near-equal rewards). A group of one, or of equal values, gives zero.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Sequence
from typing import Literal

Normalize = Literal["std", "none"]

EPSILON = 1e-6  # keeps a near-flat group's division finite


def group_relative(
    values: Sequence[float | None], groups: Sequence[Hashable], normalize: Normalize
) -> list[float]:
    """Each value against the others of its group; None (unscorable: an env error) gives 0
    and takes no part in its group's mean."""
    members: dict[Hashable, list[float]] = defaultdict(list)
    for value, group in zip(values, groups, strict=True):
        if value is not None:
            members[group].append(value)
    advantages = []
    for value, group in zip(values, groups, strict=True):
        scored = members[group]
        if value is None or len(scored) < 2:
            advantages.append(0.0)
            continue
        mean = sum(scored) / len(scored)
        advantage = value - mean
        if normalize == "std":
            std = math.sqrt(sum((other - mean) ** 2 for other in scored) / len(scored))
            advantage /= std + EPSILON
        advantages.append(advantage)
    return advantages


def discounted_return(reward: float | None, steps_to_end: int, gamma: float) -> float | None:
    """The return of a step ``steps_to_end`` steps before its episode's last, the episode's
    reward coming at its end: ``gamma ** steps_to_end * reward``."""
    return None if reward is None else gamma**steps_to_end * reward


def flat_groups(
    rewards: Sequence[float | None], groups: Sequence[Hashable]
) -> dict[Hashable, bool]:
    """Per group, whether its scored episodes all earned one reward (no signal among them)."""
    seen: dict[Hashable, set[float]] = defaultdict(set)
    for reward, group in zip(rewards, groups, strict=True):
        if reward is not None:
            seen[group].add(reward)
    return {group: len(seen[group]) <= 1 for group in dict.fromkeys(groups)}
