"""Loading the model to train, and saving what training made as a plain HF directory.

A LoRA run trains adapters; unless ``merge`` is off, the saved directory holds the base model
with the adapters merged in, so ``rollout`` and ``eval`` load it like any other model.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.common import no_progress_bars
from agentcli.conversation import StudentView
from agentcli.errors import ModelUnavailableError
from agentcli.trained_view import model_view_path, write_view

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from agentcli.train.config import LoraSpec

ADAPTER_DIR = "adapter"  # a LoRA run's adapters, kept only with --no-merge


def require_model_dir(path: Path) -> None:
    if not (path / "config.json").is_file():
        raise ModelUnavailableError(
            f"{path} is not a model directory (no config.json); build one with "
            "`agentgym model tiny --out DIR` or pass a trained model"
        )


def load_tokenizer(path: Path) -> PreTrainedTokenizerBase:
    from transformers import AutoTokenizer

    require_model_dir(path)
    with no_progress_bars():
        tokenizer = AutoTokenizer.from_pretrained(path)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_model(path: Path) -> PreTrainedModel:
    """In fp32: the trainer's mixed precision (bf16 autocast on a GPU) keeps fp32 master weights."""
    import torch
    from transformers import AutoModelForCausalLM

    require_model_dir(path)
    with no_progress_bars():
        return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)


def lora_config(spec: LoraSpec) -> Any:
    from peft import LoraConfig

    targets = spec.target_modules
    return LoraConfig(
        r=spec.r,
        lora_alpha=spec.alpha,
        lora_dropout=spec.dropout,
        target_modules=targets if targets == "all-linear" else targets.split("+"),
        task_type="CAUSAL_LM",
    )


def merge_adapters(base: Path, adapters: Path, out: Path) -> None:
    """Load ``base``, merge the LoRA ``adapters`` into it and save a plain model to ``out``."""
    from peft import PeftModel

    with no_progress_bars():
        merged = PeftModel.from_pretrained(load_model(base), adapters).merge_and_unload()
        merged.save_pretrained(out)


def save_trained_model(
    trainer: Any, base: Path, out: Path, *, lora: bool, merge: bool, view: StudentView | None
) -> None:
    """Save the trained model and its tokenizer to ``out`` from every rank (the trainer writes
    on rank 0 and gathers sharded weights first); LoRA adapters are merged on rank 0. Beside
    them, the ``view`` the model learned under (``agentcli.trained_view``)."""
    if lora and merge:
        adapters = out / ADAPTER_DIR
        trainer.save_model(str(adapters))
        if trainer.accelerator.is_main_process:
            merge_adapters(base, adapters, out)
            trainer.processing_class.save_pretrained(out)
            shutil.rmtree(adapters)
    else:
        trainer.save_model(str(out))
    if view is not None and trainer.accelerator.is_main_process:
        write_view(model_view_path(out), view)
    trainer.accelerator.wait_for_everyone()
