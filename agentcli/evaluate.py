"""Metrics over Episodes: success rate, mean score and mean steps, per env and per category,
each rate and mean with its standard error; ``metrics.json`` also names what was evaluated,
how the episodes ended (and how many ran out of rounds in a loop) and, where the env sorts its
actions into kinds, how many steps of each kind the policy took."""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from agentcli.common import END_ERROR, END_MAX_ROUNDS, EndReason, write_atomic
from agentcli.conversation import is_invalid_reply
from agentcli.data.jsonl import read_records
from agentcli.envs.base import ActionKinds
from agentcli.envs.registry import get_spec
from agentcli.records import Episode, parse_item_id
from agentcli.resume import settings_digest, settings_path

if TYPE_CHECKING:
    from agentcli.rollout import RolloutConfig

ALL = "all"


@dataclass(frozen=True)
class Metrics:
    env: str
    category: str  # "all", or the env's task category (sciworld task, alfworld type, babyai level)
    episodes: int
    success_rate: float
    mean_score: float
    mean_steps: float
    errors: int
    # new columns go last: summary.csv keeps the order of these fields
    success_se: float  # standard error of success_rate
    score_se: float  # standard error of mean_score
    # metrics.json only (summary.csv keeps the columns above): episodes per end reason
    # (``Episode.meta["end_reason"]``: done, max_rounds, context_exceeded, error), and, where
    # the env sorts its actions into kinds (``EnvSpec.action_kinds``), steps per kind
    ends: dict[str, int] = field(default_factory=dict)
    action_kinds: dict[str, int] = field(default_factory=dict)
    # of the max_rounds ends, those in a loop (``loop_period``), and of those, the ones that
    # repeated an action that changed nothing (a period of 1)
    looped: int = 0
    stuck: int = 0


_JSON_ONLY = ("ends", "action_kinds", "looped", "stuck")  # no column of summary.csv
SUMMARY_COLUMNS = [name for name in Metrics.__dataclass_fields__ if name not in _JSON_ONLY]


def standard_error(values: list[float]) -> float:
    """The standard error of the mean of ``values``: their deviation over √count. For 0/1
    values (success) it is the binomial ``√(p(1-p)/n)``."""
    return statistics.pstdev(values) / math.sqrt(len(values))


def count_ends(episodes: list[Episode]) -> dict[str, int]:
    """Episodes per end reason, every reason listed in ``EndReason``'s order (0 where none
    ended so); a record that names none (imported) counts as ``unrecorded``."""
    counts = Counter(episode.meta.get("end_reason") or "unrecorded" for episode in episodes)
    reasons = [*get_args(EndReason), *sorted(set(counts) - set(get_args(EndReason)))]
    return {reason: counts[reason] for reason in reasons}


def loop_period(end_reason: str | None, moves: Sequence[tuple[str, str]]) -> int | None:
    """How many steps the cycle an episode ran out of rounds in takes, from its end reason and
    its steps' (observation, action) pairs: its last action was taken that many steps earlier
    in the same state (the observation, as the env wrote it); None when the episode did not
    end so. A student that sees the observation alone and acts greedily in a deterministic env
    repeats that cycle to the round limit (with more of the history in view, the state
    recurred all the same); a period of 1 is an action that left the state as it was,
    repeated."""
    if end_reason != END_MAX_ROUNDS or not moves:
        return None
    last = moves[-1]
    for period, move in enumerate(reversed(moves[:-1]), start=1):
        if move == last:
            return period
    return None


def episode_loop_period(episode: Episode) -> int | None:
    """``loop_period`` of a recorded episode."""
    moves = [(step.observation, step.action) for step in episode.steps]
    return loop_period(episode.meta.get("end_reason"), moves)


def count_action_kinds(episodes: Iterable[Episode], kinds: ActionKinds) -> dict[str, int]:
    """Steps per kind of action, every kind listed (0 where none was taken). A step after a
    reply with no action shows the notice that answered it, not a page: its action was taken
    on the page before."""
    counts: Counter[str] = Counter()
    for episode in episodes:
        page = ""
        for step in episode.steps:
            if not is_invalid_reply(step.observation):
                page = step.observation
            counts[kinds.classify(page, step.action, step.candidate_actions)] += 1
    return {name: counts[name] for name in kinds.names}


def _summarise(
    env: str, category: str, episodes: list[Episode], kinds: ActionKinds | None = None
) -> Metrics:
    count = len(episodes)
    successes = [float(e.success) for e in episodes]
    periods = [episode_loop_period(episode) for episode in episodes]
    scores = [e.reward for e in episodes]
    # fsum: the exactly rounded sum, whatever order the episodes finished in (a float sum's
    # last digit follows the order, and concurrent episodes finish in another order each run)
    return Metrics(
        env=env,
        category=category,
        episodes=count,
        success_rate=sum(successes) / count,
        mean_score=math.fsum(scores) / count,
        mean_steps=sum(e.n_steps for e in episodes) / count,
        errors=sum(e.meta.get("end_reason") == END_ERROR for e in episodes),
        success_se=standard_error(successes),
        score_se=standard_error(scores),
        ends=count_ends(episodes),
        action_kinds=count_action_kinds(episodes, kinds) if kinds else {},
        looped=sum(period is not None for period in periods),
        stuck=periods.count(1),
    )


def latest_per_item(episodes: Iterable[Episode]) -> list[Episode]:
    """A rerun appends a new record for an item that errored: the last one counts."""
    return list({episode.item_id: episode for episode in episodes}.values())


def compute_metrics(episodes: Iterable[Episode]) -> list[Metrics]:
    """One ``all`` row per env, then one row per category where the env has categories."""
    by_env: dict[str, list[Episode]] = defaultdict(list)
    for episode in latest_per_item(episodes):
        by_env[episode.env].append(episode)
    rows = []
    for env, env_episodes in sorted(by_env.items()):
        spec = get_spec(env)
        rows.append(_summarise(env, ALL, env_episodes, spec.action_kinds))
        categorise = spec.categories
        if categorise is None:
            continue
        by_category: dict[str, list[Episode]] = defaultdict(list)
        for episode in env_episodes:
            by_category[categorise(parse_item_id(episode.item_id)[1])].append(episode)
        rows += [
            _summarise(env, name, group, spec.action_kinds)
            for name, group in sorted(by_category.items())
        ]
    return rows


def evaluated(settings: dict[str, Any]) -> dict[str, Any]:
    """What ``metrics.json`` says was evaluated, from the episodes' kept settings: the split,
    who played (the model's path or the endpoint's model name; a digest of its weights), and a
    digest of every setting that shapes an episode, equal for two evals of the same settings."""
    policy = settings["policy"]
    return {
        "split": settings["split"],
        "policy": policy["kind"],
        "model": policy["model"] or policy["model_name"],
        "weights_digest": policy["weights"],
        "settings_digest": settings_digest(settings),
    }


def write_metrics(
    rows: list[Metrics], out_dir: Path, identity: dict[str, Any] | None = None
) -> None:
    """``summary.csv`` (one row per env and category) and ``metrics.json``, whose rows also
    carry ``identity`` (``evaluated``), atomically."""
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=SUMMARY_COLUMNS)
    writer.writeheader()
    for row in rows:
        values = {k: v for k, v in asdict(row).items() if k in SUMMARY_COLUMNS}
        writer.writerow({k: round(v, 4) if isinstance(v, float) else v for k, v in values.items()})
    write_atomic(out_dir / "summary.csv", table.getvalue())
    rows_json = [asdict(row) | (identity or {}) for row in rows]
    write_atomic(out_dir / "metrics.json", json.dumps(rows_json, indent=2) + "\n")


def evaluate(config: RolloutConfig, on_progress: Any = None) -> list[Metrics]:
    """Roll the policy out on the items, then score every episode in the output."""
    from agentcli.rollout import execute

    execute(config, on_progress)
    rows = compute_metrics(read_records(config.episodes_path, Episode))
    settings = json.loads(settings_path(config.episodes_path).read_text(encoding="utf-8"))
    write_metrics(rows, config.episodes_path.parent, evaluated(settings))
    return rows
