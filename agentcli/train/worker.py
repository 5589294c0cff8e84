"""What ``accelerate launch`` runs on each rank: ``python -m agentcli.train.worker CONFIG``.

CONFIG is the ``train_config.yaml`` the launcher saved; logs go to stderr from rank 0 only.
This module trains without in-training eval; ``agentcli.train_eval`` is the worker that
evaluates (it calls ``main`` with its evaluator).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

from agentcli.errors import AgentGymError
from agentcli.train.config import TrainConfig
from agentcli.train.protocols import CheckpointEvaluator, EpisodePlayer
from agentcli.train.run import run_training


def read_config(path: Path) -> TrainConfig:
    return TrainConfig.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def setup_rank_logging() -> bool:
    """INFO logs on rank 0, warnings only elsewhere; whether this is rank 0."""
    rank_zero = os.environ.get("RANK", "0") == "0"
    logging.basicConfig(level=logging.INFO if rank_zero else logging.WARNING, format="%(message)s")
    return rank_zero


def main(
    build_evaluator: Callable[[TrainConfig], CheckpointEvaluator | None] | None = None,
    build_player: Callable[[TrainConfig], EpisodePlayer | None] | None = None,
) -> None:
    """Train this rank; ``build_evaluator`` makes the in-training eval from the config,
    ``build_player`` grpo's episode player (each rank plays its own episodes)."""
    (config_path,) = sys.argv[1:]
    rank_zero = setup_rank_logging()
    try:
        config = read_config(Path(config_path))
        evaluate = build_evaluator(config) if build_evaluator is not None else None
        play = build_player(config) if build_player is not None else None
        run_training(config, evaluate=evaluate, play=play)
    except AgentGymError as error:  # one line, from rank 0, as the CLI prints its errors
        if rank_zero:
            logging.getLogger("agentgym.train").error("error: %s", error)
        sys.exit(error.exit_code)


if __name__ == "__main__":
    main()
