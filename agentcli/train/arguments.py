"""The keyword arguments of TRL's ``SFTConfig``/``DPOConfig``: the ``hyperparameters`` section
under its own names, plus what the device and the run's paths decide.

The device decides what works: on CPU, TRL's defaults (bf16, gradient checkpointing) fail or
slow training down, so they are turned off there.
"""

from __future__ import annotations

from typing import Any

from agentcli.errors import UsageError
from agentcli.train.config import TrainConfig
from agentcli.train.tracking import require_tracker


def precision(dtype: str, *, cuda: bool, bf16_supported: bool) -> dict[str, bool]:
    """``bf16``/``fp16`` flags: mixed precision on a GPU, full fp32 on CPU (where bf16 is slow)."""
    if dtype == "auto":
        dtype = "bf16" if cuda and bf16_supported else "fp32"
    if dtype != "fp32" and not cuda:
        raise UsageError(f"--dtype {dtype} needs a GPU; on CPU use --dtype fp32 (or auto)")
    return {"bf16": dtype == "bf16", "fp16": dtype == "fp16"}


def trainer_arguments(config: TrainConfig) -> dict[str, Any]:
    """Keyword arguments of ``SFTConfig`` (bc/sft) or ``DPOConfig`` (dpo, with ``beta``; its
    ``sft_weight`` is DPO's loss mix, ``dpo_loss``)."""
    import torch

    hyperparameters = config.hyperparameters
    require_tracker(hyperparameters.report_to)
    cuda = torch.cuda.is_available()
    if hyperparameters.activation_checkpointing is None:  # the device's default
        hyperparameters = hyperparameters.model_copy(update={"activation_checkpointing": cuda})
    bf16_supported = cuda and torch.cuda.is_bf16_supported()
    return {
        # the section by its own names; unset ones (run_name, project, beta) keep TRL's defaults
        **hyperparameters.model_dump(exclude_none=True, exclude={"sft_weight"}),
        "output_dir": str(config.checkpoints),
        "use_cpu": not cuda,
        **precision(config.launch.dtype, cuda=cuda, bf16_supported=bf16_supported),
        "data_seed": hyperparameters.seed,
        "logging_first_step": True,
        "save_strategy": "steps",
        "save_total_limit": 2,
        "include_num_input_tokens_seen": "non_padding",
        # Other ranks wait at a barrier while rank 0 evaluates (--eval-every): give it hours.
        "ddp_timeout": 5 * 3600,
        "disable_tqdm": True,  # our progress callback draws the bar (loss, tokens/s, ETA)
    }
