"""A training worker for tests: ``agentcli.train.worker`` plus a record of the rows each rank
fed its model, written to ``<out>/inputs_rank<N>.json``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from transformers import TrainerCallback

from agentcli.train.run import run_training
from agentcli.train.worker import read_config, setup_rank_logging


class RecordInputs(TrainerCallback):
    def __init__(self, out: Path) -> None:
        self.path = out / f"inputs_rank{os.environ.get('RANK', '0')}.json"
        self.rows: list[list[int]] = []

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        embeddings = model.get_input_embeddings()
        embeddings.register_forward_pre_hook(lambda module, inputs: self._record(inputs[0]))

    def _record(self, input_ids) -> None:
        self.rows += input_ids.tolist()

    def on_train_end(self, args, state, control, **kwargs):
        self.path.write_text(json.dumps(self.rows))


if __name__ == "__main__":
    setup_rank_logging()
    config = read_config(Path(sys.argv[1]))
    run_training(config, callbacks=[RecordInputs(config.out)])
