"""What ``accelerate launch`` runs on each rank: ``python -m agentcli.train.worker CONFIG``.

CONFIG is the ``train_config.yaml`` the launcher saved; logs go to stderr from rank 0 only.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import yaml

from agentcli.train.config import TrainConfig
from agentcli.train.run import run_training


def read_config(path: Path) -> TrainConfig:
    return TrainConfig.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def setup_rank_logging() -> None:
    rank_zero = os.environ.get("RANK", "0") == "0"
    logging.basicConfig(level=logging.INFO if rank_zero else logging.WARNING, format="%(message)s")


def main() -> None:
    (config_path,) = sys.argv[1:]
    setup_rank_logging()
    run_training(read_config(Path(config_path)))


if __name__ == "__main__":
    main()
