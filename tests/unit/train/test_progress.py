"""Training progress off a terminal: one log line per step at most, each with its own loss."""

from __future__ import annotations

import logging
from types import SimpleNamespace

from transformers import TrainerState

from agentcli.train.callbacks import ProgressBar


def test_off_a_terminal_each_step_is_logged_once_and_a_logging_step_with_its_new_loss(caplog):
    args = SimpleNamespace(logging_steps=2, logging_first_step=False)
    state = TrainerState(max_steps=4, num_input_tokens_seen=0)
    bar = ProgressBar("sft")
    bar.HEARTBEAT_S = 0.0  # every step is due a line
    bar.on_train_begin(args, state, None)
    assert bar.bar.disable  # pytest's stderr is no terminal
    with caplog.at_level(logging.INFO, logger="agentgym.train"):
        for step, loss in enumerate([2.0, 1.5, 1.2, 0.9], start=1):
            state.global_step = step
            bar.on_step_end(args, state, None)
            if step % args.logging_steps == 0:
                bar.on_log(args, state, None, logs={"loss": loss})
    lines = [record.getMessage() for record in caplog.records]
    assert [line.split(":")[0] for line in lines] == ["step 1/4", "step 2/4", "step 3/4",
                                                      "step 4/4"]  # fmt: skip
    assert "loss -," in lines[0] and "loss 1.5," in lines[1] and "loss 0.9," in lines[3]
    assert "loss 1.5 (step 2)," in lines[2]  # between logging steps: the last loss, and when
