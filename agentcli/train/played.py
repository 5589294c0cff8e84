"""What an online run (``train grpo``, either unit) plays: each episode's reward, and
``OUT/episodes.jsonl``, the log of every episode played, each step's episodes once even
across a resume."""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.common import END_ERROR
from agentcli.data.jsonl import append_records, read_records, write_records
from agentcli.errors import UsageError
from agentcli.records import Episode

if TYPE_CHECKING:
    from agentcli.train.config import TrainConfig

log = logging.getLogger("agentgym.train")

EPISODES_NAME = "episodes.jsonl"


def load_reward_hook(spec: str | None) -> Callable[[Episode], float] | None:
    """The shaping function ``module:function`` names (the current directory importable)."""
    if spec is None:
        return None
    module_name, colon, name = spec.partition(":")
    if not colon or not module_name or not name:
        raise UsageError(f"--reward {spec!r}: write it as module:function, e.g. shaping:bonus")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        hook = getattr(importlib.import_module(module_name), name)
    except ImportError as error:
        raise UsageError(f"--reward {spec}: cannot import {module_name} ({error})") from None
    except AttributeError:
        raise UsageError(f"--reward {spec}: {module_name} has no {name}") from None
    if not callable(hook):
        raise UsageError(f"--reward {spec}: {name} is not a function")
    return hook


def group_rewards(
    episodes: Sequence[Episode], hook: Callable[[Episode], float] | None
) -> list[float | None]:
    """Each episode's reward: the hook's, else the env's score; None after an env error."""
    return [
        None
        if episode.meta.get("end_reason") == END_ERROR
        else float(hook(episode))
        if hook
        else episode.reward
        for episode in episodes
    ]


def items_per_step(config: TrainConfig, available: int) -> int:
    """The items a training step plays (its episodes, in groups, over every process); too few
    ``available`` is refused (a trainer would take no step at all, and say so in a warning)."""
    hyperparameters = config.hyperparameters
    episodes = (
        hyperparameters.per_device_train_batch_size
        * hyperparameters.gradient_accumulation_steps
        * (config.launch.num_processes or 1)
    )
    per_step = episodes // config.grpo.num_generations
    if available < per_step:
        raise UsageError(
            f"grpo: {available} training items, but a step plays {per_step} (its {episodes}"
            f" episodes in groups of {config.grpo.num_generations}): choose more items, or a"
            " smaller --batch-size"
        )
    return per_step


def episodes_path(out: Path, rank: int) -> Path:
    """``out/episodes.jsonl``, or ``episodes.rankN.jsonl`` on rank N > 0."""
    return out / (EPISODES_NAME if rank == 0 else f"episodes.rank{rank}.jsonl")


def drop_episodes_from(path: Path, step: int) -> None:
    """Drop the episodes of ``step`` and later from ``path``: those a run killed after its last
    checkpoint had played, which its resumed run (from ``step``) plays again."""
    if not path.exists():
        return
    episodes = read_records(path, Episode)
    kept = [episode for episode in episodes if episode.meta["step"] < step]
    if len(kept) < len(episodes):
        log.info("grpo: %s: the episodes of step %d on are played again", path, step)
        write_records(path, kept)


def keep_episodes(path: Path, episodes: Sequence[Episode], rewards: Sequence[Any]) -> None:
    """Append the step's episodes, with the reward trained on."""
    append_records(
        path,
        [
            episode.model_copy(update={"meta": {**episode.meta, "trained_reward": reward}})
            for episode, reward in zip(episodes, rewards, strict=True)
        ],
    )
