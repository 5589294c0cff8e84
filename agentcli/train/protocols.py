"""What training is handed by its caller, which knows the envs it does not: the evaluator of a
checkpoint during training and the player of grpo's episodes (``agentcli.train_eval`` builds
both). Below ``run`` and the trainers and callbacks it builds, which all name them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from agentcli.errors import UsageError
from agentcli.records import Episode
from agentcli.train.config import TrainConfig


class CheckpointEvaluator(Protocol):
    """Evaluates the model saved in ``model_dir`` during training: (success rate, mean score).
    ``name`` (``epoch_N``, ``step_N``) names the evaluation, e.g. for its output folder."""

    def __call__(self, model_dir: Path, name: str) -> tuple[float, float]: ...


def require_evaluator(config: TrainConfig, evaluate: CheckpointEvaluator | None) -> None:
    if config.eval.enabled and evaluate is None:
        raise UsageError(
            "eval.every/eval.steps need a checkpoint evaluator: train through"
            " agentcli.train_eval.train (as `agentgym train` does), which rolls checkpoints out"
        )


def require_player(config: TrainConfig, play: EpisodePlayer | None) -> None:
    if config.method == "grpo" and play is None:
        raise UsageError(
            "grpo needs an episode player: train through agentcli.train_eval.train (as"
            " `agentgym train grpo` does), which plays its envs"
        )


class EpisodePlayer(Protocol):
    """Plays grpo's episodes, one per item id, with the model it is given as it is now
    (``agentcli.rl.episodes.EnvEpisodes``); ``item_ids`` are the items to train on."""

    def item_ids(self) -> list[str]: ...

    def __call__(
        self, item_ids: Sequence[str], model: Any, tokenizer: Any, *, step: int
    ) -> list[Episode]: ...

    def close(self) -> None: ...
