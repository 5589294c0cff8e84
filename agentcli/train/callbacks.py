"""Trainer callbacks: the progress bar, and what AgentGym does at epoch ends (save, evaluate).

Callbacks run on every rank. Saving is collective (sharded weights are gathered first), so every
rank takes part; evaluation runs on rank 0 while the other ranks wait at a barrier. How a
checkpoint is evaluated is not known here: training imports no env or rollout code, so the
caller passes a ``CheckpointEvaluator`` in (``agentcli.train_eval`` builds the real one).
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from agentcli.train.config import TrainConfig
from agentcli.train.model import save_trained_model
from agentcli.train.protocols import CheckpointEvaluator

log = logging.getLogger("agentgym.train")


class ProgressBar(TrainerCallback):
    """A bar on stderr (rank 0) with the loss (grpo: and the mean episode reward), tokens/s
    and the ETA; where stderr is not a terminal, a log line instead at each logging step and
    at least every ``HEARTBEAT_S`` (its loss the last logged, with the step it was logged at)."""

    HEARTBEAT_S = 30.0

    def __init__(self, description: str) -> None:
        self.description = description
        self.bar: Any = None
        self.started = 0.0
        self.tokens_at_start = 0
        self.steps_at_start = 0
        self.loss: float | None = None
        self.loss_step = 0  # the step the loss was logged at
        self.reward: float | None = None  # grpo logs it with its loss
        self.last_line = 0.0

    def on_train_begin(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
            return
        from tqdm.auto import tqdm

        self.bar = tqdm(
            total=state.max_steps,
            initial=state.global_step,
            desc=self.description,
            file=sys.stderr,
            disable=None,  # off when stderr is not a terminal
            dynamic_ncols=True,
        )
        self.started = self.last_line = time.perf_counter()
        self.tokens_at_start = state.num_input_tokens_seen
        self.steps_at_start = state.global_step

    def on_step_end(self, args, state, control, **kwargs):
        if self.bar is None:
            return
        self.bar.update(state.global_step - self.bar.n)
        logging_step = state.global_step % args.logging_steps == 0 or (
            args.logging_first_step and state.global_step == 1
        )  # on_log writes this step's line, with its loss
        quiet_for = time.perf_counter() - self.last_line
        if self.bar.disable and not logging_step and quiet_for >= self.HEARTBEAT_S:
            self._log_line(state)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self.bar is None or not logs or "loss" not in logs:
            return
        self.loss, self.loss_step = logs["loss"], state.global_step
        self.reward = logs.get("reward", self.reward)
        if self.bar.disable:
            self._log_line(state)
        else:
            reward = {} if self.reward is None else {"reward": f"{self.reward:.3g}"}
            self.bar.set_postfix(loss=f"{self.loss:.4g}", **reward, tok_s=self._speed(state))

    def on_train_end(self, args, state, control, **kwargs):
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def _log_line(self, state: Any) -> None:
        now = time.perf_counter()
        done = state.global_step - self.steps_at_start
        left = (now - self.started) / done * (state.max_steps - state.global_step) if done else 0
        loss = f"{self.loss:.4g}" if self.loss is not None else "-"
        if self.loss is not None and self.loss_step != state.global_step:
            loss += f" (step {self.loss_step})"  # a heartbeat between logging steps
        reward = f", reward {self.reward:.3g}" if self.reward is not None else ""
        log.info(
            "step %d/%d: loss %s%s, %s tokens/s, %s left",
            state.global_step, state.max_steps, loss, reward, self._speed(state), _duration(left),
        )  # fmt: skip
        self.last_line = now

    def _speed(self, state: Any) -> str:
        elapsed = time.perf_counter() - self.started
        tokens = state.num_input_tokens_seen - self.tokens_at_start
        return f"{tokens / elapsed:.0f}" if elapsed else "-"


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"


class EpochHooks(TrainerCallback):
    """AgentGym's epoch-end work: save ``train_epoch_N/`` every ``saving.every`` epochs and
    evaluate the model every ``eval.every`` epochs (or ``eval.steps`` steps) with ``evaluate``,
    logging success and score next to the loss."""

    def __init__(
        self, trainer: Any, config: TrainConfig, evaluate: CheckpointEvaluator | None
    ) -> None:
        self.trainer = trainer
        self.config = config
        self.evaluate = evaluate

    def on_epoch_end(self, args, state, control, **kwargs):
        epoch = round(state.epoch or 0)
        config = self.config
        saving = config.saving.every is not None and epoch % config.saving.every == 0
        evaluating = config.eval.every is not None and epoch % config.eval.every == 0
        if saving:
            self._save(config.epoch_dir(epoch))
        if evaluating:
            model_dir = config.epoch_dir(epoch) if saving else self._save_for_eval()
            self._evaluate(model_dir, f"epoch_{epoch}")

    def on_step_end(self, args, state, control, **kwargs):
        steps = self.config.eval.steps
        if steps is not None and state.global_step % steps == 0:
            self._evaluate(self._save_for_eval(), f"step_{state.global_step}")

    def _save(self, path: Path) -> None:
        adapters = self.config.adapters
        save_trained_model(
            self.trainer,
            self.config.model,
            path,
            lora=adapters.lora is not None,
            merge=adapters.merge,
            view=self.config.learned_view,
        )

    def _save_for_eval(self) -> Path:
        path = self.config.out / "eval" / "model"  # overwritten by each evaluation
        self._save(path)
        return path

    def _evaluate(self, model_dir: Path, name: str) -> None:
        assert self.evaluate is not None  # run_training checks it
        accelerator = self.trainer.accelerator
        if accelerator.is_main_process:
            success, score = self.evaluate(model_dir, name)
            log.info("%s: eval success %.1f%%, score %.3g", name, 100 * success, score)
            self.trainer.log({"eval_success": success, "eval_score": score})
        accelerator.wait_for_everyone()
