"""A training worker for tests: ``agentcli.train.worker`` plus a record of what each rank
ran, written to ``<out>/inputs_rank<N>.json``: the batches it fed its model, the world size and
the precision it trained in. With ``PROBE_STOP_AT=N`` in the environment, training stops after
step N (as a kill would, but with the rank's record written)."""

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
        self.batches: list[list[list[int]]] = []
        self.stop_at = int(os.environ.get("PROBE_STOP_AT", "0"))

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        embeddings = model.get_input_embeddings()
        embeddings.register_forward_pre_hook(lambda module, inputs: self._record(inputs[0]))
        self.ran = {"world_size": args.world_size, "mixed_precision": args.mixed_precision}

    def _record(self, input_ids) -> None:
        self.batches.append(input_ids.tolist())

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == self.stop_at:
            control.should_training_stop = True

    def on_train_end(self, args, state, control, **kwargs):
        self.path.write_text(json.dumps({**self.ran, "batches": self.batches}))


if __name__ == "__main__":
    setup_rank_logging()
    config = read_config(Path(sys.argv[1]))
    run_training(config, callbacks=[RecordInputs(config.out)])
