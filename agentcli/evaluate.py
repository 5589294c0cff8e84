"""Metrics over Episodes: success rate, mean score and mean steps, per env and per category."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.common import END_ERROR, write_atomic
from agentcli.data.jsonl import read_records
from agentcli.data.records import Episode, parse_item_id
from agentcli.envs.registry import get_spec

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


def _summarise(env: str, category: str, episodes: list[Episode]) -> Metrics:
    count = len(episodes)
    return Metrics(
        env=env,
        category=category,
        episodes=count,
        success_rate=sum(e.success for e in episodes) / count,
        mean_score=sum(e.reward for e in episodes) / count,
        mean_steps=sum(e.n_steps for e in episodes) / count,
        errors=sum(e.meta.get("end_reason") == END_ERROR for e in episodes),
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
        rows.append(_summarise(env, ALL, env_episodes))
        categorise = get_spec(env).categories
        if categorise is None:
            continue
        by_category: dict[str, list[Episode]] = defaultdict(list)
        for episode in env_episodes:
            by_category[categorise(parse_item_id(episode.item_id)[1])].append(episode)
        rows += [_summarise(env, name, group) for name, group in sorted(by_category.items())]
    return rows


def write_metrics(rows: list[Metrics], out_dir: Path) -> None:
    """``summary.csv`` (one row per env and category) and ``metrics.json``, atomically."""
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=list(Metrics.__dataclass_fields__))
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(row).items()}
        )
    write_atomic(out_dir / "summary.csv", table.getvalue())
    write_atomic(
        out_dir / "metrics.json", json.dumps([asdict(row) for row in rows], indent=2) + "\n"
    )


def evaluate(config: RolloutConfig, on_progress: Any = None) -> list[Metrics]:
    """Roll the policy out on the items, then score every episode in the output."""
    from agentcli.rollout import execute

    execute(config, on_progress)
    rows = compute_metrics(read_records(config.episodes_path, Episode))
    write_metrics(rows, config.episodes_path.parent)
    return rows
