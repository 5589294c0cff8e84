"""Trainer callbacks: the progress bar, and what AgentGym does at epoch ends (save, evaluate).

Callbacks run on every rank. Saving is collective (sharded weights are gathered first), so every
rank takes part; evaluation runs on rank 0 while the other ranks wait at a barrier.
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

log = logging.getLogger("agentgym.train")


class ProgressBar(TrainerCallback):
    """A bar on stderr (rank 0, terminals only) with the loss, tokens/s and the ETA."""

    def __init__(self, description: str) -> None:
        self.description = description
        self.bar: Any = None
        self.started = 0.0
        self.tokens_at_start = 0

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
        self.started = time.perf_counter()
        self.tokens_at_start = state.num_input_tokens_seen

    def on_step_end(self, args, state, control, **kwargs):
        if self.bar is not None:
            self.bar.update(state.global_step - self.bar.n)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self.bar is None or not logs or "loss" not in logs:
            return
        elapsed = time.perf_counter() - self.started
        tokens = state.num_input_tokens_seen - self.tokens_at_start
        speed = f"{tokens / elapsed:.0f}" if elapsed else "-"
        if self.bar.disable:  # not a terminal: a log line instead of the bar
            log.info(
                "step %d/%d: loss %.4g, %s tokens/s",
                state.global_step, state.max_steps, logs["loss"], speed,
            )  # fmt: skip
        else:
            self.bar.set_postfix(loss=f"{logs['loss']:.4g}", tok_s=speed)

    def on_train_end(self, args, state, control, **kwargs):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class EpochHooks(TrainerCallback):
    """AgentGym's epoch-end work: save ``train_epoch_N/`` every ``save_every`` epochs and roll
    the model out on the eval items every ``eval_every`` epochs (or ``eval_steps`` steps),
    logging success and score next to the loss."""

    def __init__(self, trainer: Any, config: TrainConfig) -> None:
        self.trainer = trainer
        self.config = config

    def on_epoch_end(self, args, state, control, **kwargs):
        epoch = round(state.epoch or 0)
        config = self.config
        saving = config.save_every is not None and epoch % config.save_every == 0
        evaluating = config.eval_every is not None and epoch % config.eval_every == 0
        if saving:
            self._save(config.epoch_dir(epoch))
        if evaluating:
            model_dir = config.epoch_dir(epoch) if saving else self._save_for_eval()
            self._evaluate(model_dir, f"epoch_{epoch}", state)

    def on_step_end(self, args, state, control, **kwargs):
        steps = self.config.eval_steps
        if steps is not None and state.global_step % steps == 0:
            self._evaluate(self._save_for_eval(), f"step_{state.global_step}", state)

    def _save(self, path: Path) -> None:
        save_trained_model(
            self.trainer,
            self.config.model,
            path,
            lora=self.config.lora is not None,
            merge=self.config.merge,
        )

    def _save_for_eval(self) -> Path:
        path = self.config.out / "eval" / "model"  # overwritten by each evaluation
        self._save(path)
        return path

    def _evaluate(self, model_dir: Path, name: str, state: Any) -> None:
        accelerator = self.trainer.accelerator
        if accelerator.is_main_process:
            success, score = evaluate_checkpoint(self.config, model_dir, name)
            log.info("%s: eval success %.1f%%, score %.3g", name, 100 * success, score)
            self.trainer.log({"eval_success": success, "eval_score": score})
        accelerator.wait_for_everyone()


def evaluate_checkpoint(config: TrainConfig, model_dir: Path, name: str) -> tuple[float, float]:
    """Roll ``model_dir`` out on the eval items; (success rate, mean score)."""
    from agentcli.evaluate import ALL, evaluate
    from agentcli.policy import PolicyConfig
    from agentcli.rollout import RolloutConfig

    assert config.env is not None and config.eval_items is not None  # TrainConfig checks it
    rollout = RolloutConfig(
        env=config.env,
        data=config.eval_items,
        env_server=config.env_server,
        concurrency=config.eval_batch_size,
        max_rounds=config.max_rounds,
        view=config.eval_view,
        out=config.out / "eval" / name,
        policy=PolicyConfig(kind="local", model=model_dir, batch_size=config.eval_batch_size),
    )
    overall = next(row for row in evaluate(rollout) if row.category == ALL)
    return overall.success_rate, overall.mean_score
