"""The settings SFT and DPO share, as keyword arguments of TRL's ``SFTConfig``/``DPOConfig``.

The device decides what works: on CPU, TRL's defaults (bf16, gradient checkpointing) fail or
slow training down, so they are turned off there.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from agentcli.errors import UsageError
from agentcli.train.config import TrainConfig

# What to pip install for each --report-to backend.
TRACKER_PACKAGES = {"tensorboard": "tensorboard", "wandb": "wandb", "trackio": "trackio"}


def require_tracker(report_to: str) -> None:
    package = TRACKER_PACKAGES.get(report_to)
    if package is not None and importlib.util.find_spec(package) is None:
        raise UsageError(
            f"--report-to {report_to} needs the {package} package: run `pip install {package}`"
            " or pass --report-to none"
        )


def precision(config: TrainConfig, *, cuda: bool, bf16_supported: bool) -> dict[str, bool]:
    """``bf16``/``fp16`` flags: mixed precision on a GPU, full fp32 on CPU (where bf16 is slow)."""
    dtype = config.dtype
    if dtype == "auto":
        dtype = "bf16" if cuda and bf16_supported else "fp32"
    if dtype != "fp32" and not cuda:
        raise UsageError(f"--dtype {dtype} needs a GPU; on CPU use --dtype fp32 (or auto)")
    return {"bf16": dtype == "bf16", "fp16": dtype == "fp16"}


def shared_arguments(config: TrainConfig) -> dict[str, Any]:
    import torch

    require_tracker(config.report_to)
    cuda = torch.cuda.is_available()
    if config.wandb_project:
        os.environ["WANDB_PROJECT"] = config.wandb_project  # how transformers' wandb hook reads it
    checkpointing = cuda if config.gradient_checkpointing is None else config.gradient_checkpointing
    return {
        "output_dir": str(config.checkpoints),
        "use_cpu": not cuda,
        **precision(config, cuda=cuda, bf16_supported=cuda and torch.cuda.is_bf16_supported()),
        "activation_checkpointing": checkpointing,
        "per_device_train_batch_size": config.batch_size,
        "gradient_accumulation_steps": config.gradient_accumulation_steps,
        "num_train_epochs": config.epochs,
        "learning_rate": config.learning_rate,
        "lr_scheduler_type": config.lr_scheduler,
        "warmup_steps": config.warmup_steps,
        "weight_decay": config.weight_decay,
        "max_grad_norm": config.max_grad_norm,
        "seed": config.seed,
        "data_seed": config.seed,
        "dataloader_num_workers": config.num_workers,
        "logging_steps": config.logging_steps,
        "logging_first_step": True,
        "save_strategy": "steps",
        "save_steps": config.save_steps,
        "save_total_limit": 2,
        "report_to": [] if config.report_to == "none" else [config.report_to],
        "run_name": config.run_name,
        "include_num_input_tokens_seen": "non_padding",
        # Other ranks wait at a barrier while rank 0 evaluates (--eval-every): give it hours.
        "ddp_timeout": 5 * 3600,
        "disable_tqdm": True,  # our progress callback draws the bar (loss, tokens/s, ETA)
    }
