"""Two evaluations compared item by item: the difference in success over the items both played,
and in score (an episode's reward: graded on webshop, where score is what is reported).

At 300 items a success rate alone is ±3 points, but two models meet the same easy and hard
items, so most of that noise is shared: the mean of the per-item differences has a standard
error (their sample deviation over √items) several times smaller than either rate's.
``agentgym report RUN`` pairs each iteration with the one before (and with the control);
``agentgym report A B`` pairs any two eval directories.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentcli.data.jsonl import read_records
from agentcli.errors import UsageError
from agentcli.evaluate import latest_per_item
from agentcli.records import Episode


@dataclass(frozen=True)
class Comparison:
    """``model`` against ``baseline`` in one env, over the items both were evaluated on."""

    env: str
    model: str  # who is compared: an iteration label ("1"), or an eval directory
    baseline: str  # what it is compared with: "0", "control", or an eval directory
    items: int  # items both played
    difference: float  # mean over the items of success(model) - success(baseline)
    standard_error: float  # of the difference: the differences' sample deviation over √items
    wins: int  # items the model won and the baseline lost
    losses: int  # items the baseline won and the model lost
    ties: int  # items both won or both lost
    split: str | None = None  # the split both were evaluated on, when known
    # the same pairing of each item's score (the env's scale); None in a report written before
    score_difference: float | None = None
    score_standard_error: float | None = None


@dataclass(frozen=True)
class Outcome:
    """What an episode of an item came to: won or not, and its score."""

    success: float
    score: float


def paired(
    env: str,
    model: str,
    baseline: str,
    a: Mapping[str, Outcome],
    b: Mapping[str, Outcome],
    *,
    split: str | None = None,
) -> Comparison | None:
    """``a`` (an outcome per item id) against ``b`` over their shared items; None under two,
    where a deviation is not defined."""
    shared = sorted(a.keys() & b.keys())
    if len(shared) < 2:
        return None
    differences = [a[item].success - b[item].success for item in shared]
    score_differences = [a[item].score - b[item].score for item in shared]
    return Comparison(
        env=env,
        model=model,
        baseline=baseline,
        items=len(shared),
        difference=statistics.fmean(differences),
        standard_error=_standard_error(differences),
        wins=sum(d > 0 for d in differences),
        losses=sum(d < 0 for d in differences),
        ties=sum(d == 0 for d in differences),
        split=split,
        score_difference=statistics.fmean(score_differences),
        score_standard_error=_standard_error(score_differences),
    )


def outcomes(episodes: Iterable[Episode]) -> dict[str, Outcome]:
    """Each episode's item id -> its outcome (a later episode of an item replaces one before)."""
    return {e.item_id: Outcome(float(e.success), e.reward) for e in episodes}


def _standard_error(differences: list[float]) -> float:
    return statistics.stdev(differences) / math.sqrt(len(differences))


def episodes_of(path: Path) -> list[Episode]:
    """The episodes of an eval: its output directory (``DIR/episodes.jsonl``) or the file;
    an item played again (after an error) counts by its last episode."""
    file = path / "episodes.jsonl" if path.is_dir() else path
    if not file.is_file():
        raise UsageError(
            f"{path} holds no episodes.jsonl: pass an eval's output directory (e.g."
            " runs/eval/<model>/<env>, or a run's <env>/iter<k>/eval)"
        )
    episodes = latest_per_item(read_records(file, Episode))
    if not episodes:
        raise UsageError(f"{file} holds no episodes: evaluate first (`agentgym eval`)")
    return episodes


def compare_evals(model: Path, baseline: Path) -> list[Comparison]:
    """``model``'s eval against ``baseline``'s, per env, over the items both played. Refused
    (one line) when they evaluated other envs or splits, or share fewer than two items."""
    sides = [_by_env(path) for path in (model, baseline)]
    if sides[0].keys() != sides[1].keys():
        raise UsageError(
            f"{model} evaluated {_names(sides[0])}, {baseline} {_names(sides[1])}: compare"
            " two evals of the same environment"
        )
    comparisons = []
    for env in sorted(sides[0]):
        (split, a), (other_split, b) = (side[env] for side in sides)
        if split != other_split:
            raise UsageError(
                f"{model} evaluated {env}'s {split or 'unnamed'} split, {baseline} its"
                f" {other_split or 'unnamed'} split: compare two evals of the same split"
            )
        shared = len(a.keys() & b.keys())
        if shared < 2:
            what = "no" if shared == 0 else "only one"
            raise UsageError(
                f"{model} and {baseline} share {what} {env} item: a paired comparison needs"
                " two or more evaluated on both (eval the same --split, --skip, --limit, --data)"
            )
        comparison = paired(env, str(model), str(baseline), a, b, split=split)
        assert comparison is not None  # two or more shared items
        comparisons.append(comparison)
    return comparisons


def _by_env(path: Path) -> dict[str, tuple[str | None, dict[str, Outcome]]]:
    """env → (its split, outcome per item id)."""
    splits: dict[str, set[str | None]] = defaultdict(set)
    episodes: dict[str, list[Episode]] = defaultdict(list)
    for episode in episodes_of(path):
        splits[episode.env].add(episode.split)
        episodes[episode.env].append(episode)
    mixed = {env: found for env, found in splits.items() if len(found) > 1}
    if mixed:
        env, found = next(iter(mixed.items()))
        raise UsageError(
            f"{path} holds {env} episodes of several splits ({', '.join(sorted(map(str, found)))}):"
            " compare evals of one split each"
        )
    return {env: (splits[env].pop(), outcomes(found)) for env, found in episodes.items()}


def _names(side: Mapping[str, object]) -> str:
    return ", ".join(sorted(side))
