"""dpo: TRL's ``DPOTrainer`` on ``{prompt, chosen, rejected}`` records.

A multi-turn prompt goes to TRL in its conversational format (lists of role/content messages),
so the model's own chat template renders it; plain-text records stay plain text. The reference
model is the starting model: TRL loads a frozen copy of it (or, with LoRA, runs the base model
with the adapters switched off).
"""

from __future__ import annotations

from typing import Any

from datasets import Dataset
from trl import DPOConfig, DPOTrainer

from agentcli.records import ChatMessage, PreferenceRecord
from agentcli.train.arguments import trainer_arguments
from agentcli.train.config import TrainConfig
from agentcli.train.datasets import load_preference_records
from agentcli.train.model import lora_config


def _as_trl(part: str | list[ChatMessage]) -> str | list[dict[str, str]]:
    """Messages as TRL's conversational format (role and content; our loss flags do not apply)."""
    if isinstance(part, str):
        return part
    return [{"role": message.role, "content": message.content} for message in part]


def preference_rows(records: list[PreferenceRecord]) -> dict[str, list[Any]]:
    return {
        "prompt": [_as_trl(record.prompt) for record in records],
        "chosen": [_as_trl(record.chosen) for record in records],
        "rejected": [_as_trl(record.rejected) for record in records],
    }


def dpo_loss(sft_weight: float | None) -> dict[str, Any]:
    """``DPOConfig``'s loss: DPO's sigmoid loss alone (TRL's default), or beside an SFT loss
    on the chosen replies, weighted ``sft_weight`` (what TRL 0.x called ``rpo_alpha``)."""
    if sft_weight is None:
        return {}
    return {"loss_type": ["sigmoid", "sft"], "loss_weights": [1.0, sft_weight]}


def build_dpo_trainer(config: TrainConfig, model: Any, tokenizer: Any) -> Any:
    dataset = Dataset.from_dict(preference_rows(load_preference_records(config.data)))
    arguments = DPOConfig(
        **trainer_arguments(config),  # with dpo's beta
        **dpo_loss(config.hyperparameters.sft_weight),
        max_length=None,  # TRL would cut the end of long pairs; we keep them whole
    )
    return DPOTrainer(
        model=model,
        args=arguments,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=lora_config(config.adapters.lora) if config.adapters.lora else None,
    )
