"""One training run in this process (one rank of a distributed run): build the trainer for the
method, train (resuming from the last checkpoint when asked), save the model and a summary."""

from __future__ import annotations

import json
import logging
import sys
import time
import warnings
from collections.abc import Sequence
from contextlib import closing, nullcontext, redirect_stdout
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentcli.common import no_progress_bars, write_atomic
from agentcli.train.config import TrainConfig
from agentcli.train.protocols import (
    CheckpointEvaluator,
    EpisodePlayer,
    require_evaluator,
    require_player,
)
from agentcli.train.tracking import tracker_environment

log = logging.getLogger("agentgym.train")


@dataclass
class TrainSummary:
    """What the run did; rank 0 writes it to ``<out>/train_summary.json``."""

    steps: int  # optimizer steps taken in this run (a resumed run counts from its checkpoint)
    global_step: int  # the step the model is at
    tokens: int  # input tokens trained on in this run, padding excluded
    seconds: float
    final_loss: float | None
    final_reward: float | None = None  # grpo: the mean episode reward last logged
    log_history: list[dict[str, Any]] = field(default_factory=list, repr=False)

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0

    def line(self) -> str:
        loss = f"{self.final_loss:.4f}" if self.final_loss is not None else "-"
        reward = f", final reward {self.final_reward:.4g}" if self.final_reward is not None else ""
        return (
            f"{self.steps} steps (at step {self.global_step}), {self.tokens:,} tokens, "
            f"{self.tokens_per_s:,.0f} tokens/s, final loss {loss}{reward}"
        )


def build_trainer(config: TrainConfig, play: EpisodePlayer | None = None) -> Any:
    import datasets

    from agentcli.train.model import load_model, load_tokenizer

    datasets.disable_progress_bars()  # preparing the data takes a second; no bars for it

    tokenizer = load_tokenizer(config.model)
    model = load_model(config.model)
    if config.method == "grpo":
        assert play is not None  # run_training checks it
        if config.grpo.unit == "step":
            from agentcli.train.stepwise import build_stepwise_trainer

            return build_stepwise_trainer(config, model, tokenizer, play)
        from agentcli.train.grpo import build_grpo_trainer

        return build_grpo_trainer(config, model, tokenizer, play)
    if config.method == "dpo":
        from agentcli.train.dpo import build_dpo_trainer

        return build_dpo_trainer(config, model, tokenizer)
    from agentcli.train.sft import build_sft_trainer

    return build_sft_trainer(config, model, tokenizer)


def last_checkpoint(config: TrainConfig) -> str | None:
    """The newest whole checkpoint. The trainer writes ``trainer_state.json`` last, so a run
    killed while saving leaves a folder without it, which resuming must pass over."""
    from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

    whole = [
        folder
        for folder in config.checkpoints.glob(f"{PREFIX_CHECKPOINT_DIR}-*")
        if folder.name.split("-")[-1].isdigit() and (folder / "trainer_state.json").is_file()
    ]
    newest = max(whole, key=lambda folder: int(folder.name.split("-")[-1]), default=None)
    return str(newest) if newest else None


def checkpoint_state(checkpoint: str | None) -> Any:
    """The trainer state a run starts from: the checkpoint's, or a fresh one."""
    from transformers import TrainerState

    if checkpoint is None:
        return TrainerState()
    return TrainerState.load_from_json(str(Path(checkpoint) / "trainer_state.json"))


def run_training(
    config: TrainConfig,
    callbacks: Sequence[Any] = (),
    evaluate: CheckpointEvaluator | None = None,
    play: EpisodePlayer | None = None,
) -> TrainSummary:
    """Train as ``config`` says; extra ``callbacks`` see every step (e.g. to record batches);
    ``evaluate`` runs the in-training eval (``config.eval``), which needs one; ``play``
    plays grpo's episodes (closed when training ends)."""
    from transformers import PrinterCallback

    from agentcli.train.callbacks import EpochHooks, ProgressBar
    from agentcli.train.model import save_trained_model

    require_evaluator(config, evaluate)
    require_player(config, play)
    # TRL 1.16 still reads transformers 5's deprecated name: nothing for our users to act on.
    warnings.filterwarnings("ignore", "`is_gradient_checkpointing` is deprecated", FutureWarning)
    # transformers' per-file bars would tear through ours; trackio prints where its logs go
    # (on stdout, which holds our results): those lines are logs
    with (
        no_progress_bars(),
        tracker_environment(config),
        redirect_stdout(sys.stderr),
        closing(play) if play is not None else nullcontext(),
    ):
        trainer = build_trainer(config, play)
        trainer.remove_callback(PrinterCallback)  # ProgressBar shows the logs, on rank 0 only
        trainer.add_callback(ProgressBar(config.method))
        trainer.add_callback(EpochHooks(trainer, config, evaluate))
        for callback in callbacks:
            trainer.add_callback(callback)
        checkpoint = last_checkpoint(config) if config.resume else None
        if config.resume and checkpoint is None:
            log.info("no checkpoint in %s: training from the start", config.checkpoints)
        start = checkpoint_state(checkpoint)  # read now: rotation may delete the checkpoint
        started = time.perf_counter()
        trainer.train(resume_from_checkpoint=checkpoint)
        seconds = time.perf_counter() - started
        adapters = config.adapters
        save_trained_model(
            trainer, config.model, config.out, lora=adapters.lora is not None,
            merge=adapters.merge, view=config.learned_view,
        )  # fmt: skip
    state = trainer.state
    losses = [entry["loss"] for entry in state.log_history if "loss" in entry]
    rewards = [entry["reward"] for entry in state.log_history if "reward" in entry]
    summary = TrainSummary(
        steps=state.global_step - start.global_step,
        global_step=state.global_step,
        tokens=state.num_input_tokens_seen - start.num_input_tokens_seen,
        seconds=seconds,
        final_loss=losses[-1] if losses else None,
        final_reward=rewards[-1] if rewards else None,
        log_history=state.log_history,
    )
    if trainer.accelerator.is_main_process:
        write_atomic(config.summary_path, json.dumps(asdict(summary), indent=2) + "\n")
    return summary
