"""``TrainConfig``: everything ``agentgym train bc|sft|dpo`` takes, with per-method defaults.

Hyper-parameters left unset take the method's default (``METHOD_DEFAULTS``), filled in on
validation: AgentGym's BC
recipe for bc, LEAP's SFT recipe for sft, the usual DPO recipe for dpo. The resolved config is
saved as ``<out>/train_config.yaml``; the distributed worker reads it back from there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from agentcli.config import CommandConfig
from agentcli.conversation import StudentView

Method = Literal["bc", "sft", "dpo"]
ReportTo = Literal["none", "tensorboard", "wandb", "trackio"]
Scheduler = Literal["linear", "cosine", "constant", "constant_with_warmup"]

CONFIG_NAME = "train_config.yaml"
SUMMARY_NAME = "train_summary.json"
CHECKPOINTS_DIR = "checkpoints"


class MethodDefaults(BaseModel):
    """Values a method takes for the fields left unset (None) in ``TrainConfig``."""

    learning_rate: float
    epochs: float
    lr_scheduler: Scheduler
    warmup_steps: float
    max_grad_norm: float
    beta: float | None = None


METHOD_DEFAULTS: dict[str, MethodDefaults] = {
    # AgentGym's train_behavioral_clone.sh: lr 1e-5, 1 epoch, linear decay, grad clip 1.
    "bc": MethodDefaults(
        learning_rate=1e-5, epochs=1, lr_scheduler="linear", warmup_steps=0, max_grad_norm=1.0
    ),
    # LEAP's SFT recipe.
    "sft": MethodDefaults(
        learning_rate=3e-5, epochs=1, lr_scheduler="cosine", warmup_steps=10, max_grad_norm=0.3
    ),
    "dpo": MethodDefaults(
        learning_rate=5e-7,
        epochs=1,
        lr_scheduler="linear",
        warmup_steps=0,
        max_grad_norm=1.0,
        beta=0.1,
    ),
}


class LoraSpec(CommandConfig):
    """PEFT LoRA adapters; on the command line ``--lora r=64,alpha=128``."""

    r: int = Field(16, ge=1, description="Rank of the adapters.")
    alpha: int = Field(32, ge=1, description="Scaling numerator (alpha / r scales the update).")
    dropout: float = Field(0.05, ge=0, lt=1)
    target_modules: str = Field(
        "all-linear", description="Modules to adapt: 'all-linear' or names joined by '+'."
    )

    @classmethod
    def parse(cls, text: str) -> dict[str, str]:
        """``r=64,alpha=128`` → ``{"r": "64", "alpha": "128"}`` (validated by the model)."""
        fields: dict[str, str] = {}
        for part in filter(None, (piece.strip() for piece in text.split(","))):
            key, equals, value = part.partition("=")
            if not equals or not key.strip() or not value.strip():
                raise ValueError(
                    f"--lora {text!r}: write it as KEY=VALUE pairs joined by commas,"
                    " e.g. r=64,alpha=128"
                )
            fields[key.strip()] = value.strip()
        return fields


class TrainConfig(CommandConfig):
    """``agentgym train bc|sft|dpo``."""

    method: Method = Field(description="bc: AgentGym conversations; sft: chat records; dpo.")
    data: Path = Field(description="Training data (AgentGym JSON, chat JSONL or preference JSONL).")
    model: Path = Field(description="Model directory to start from (HF format).")
    out: Path = Field(description="Directory for the trained model, checkpoints and logs.")
    env: str | None = Field(None, description="Environment of the data; needed by --eval-every.")

    # data
    template: Literal["chat", "llama2"] = Field(
        "chat", description="chat: the model's chat template; llama2: AgentGym's [INST] format."
    )
    max_length: int | None = Field(
        None, ge=8, description="Tokens per example at most; longer ones lose early turns."
    )
    overflow: Literal["truncate_left", "drop"] = Field(
        "truncate_left", description="Over max_length: drop whole early turns, or the example."
    )
    batching: Literal["auto", "padding_free", "grouped", "padded"] = Field(
        "auto",
        description="bc/sft: padding_free: a batch's examples in one row, no padding; grouped:"
        " batches of similar lengths, padded; padded: random batches, padded; auto:"
        " padding_free on a GPU, grouped on CPU.",
    )
    share_prefix: bool = Field(
        True,
        description="bc/sft: compute the untrained opening that a padded batch's rows share"
        " once per batch, not once per row (same loss and gradients).",
    )

    # optimisation; None takes the method's default
    batch_size: int = Field(4, ge=1, description="Examples per device per step.")
    gradient_accumulation_steps: int = Field(1, ge=1)
    epochs: float | None = Field(None, gt=0)
    learning_rate: float | None = Field(None, gt=0)
    lr_scheduler: Scheduler | None = None
    warmup_steps: float | None = Field(
        None, ge=0, description="Warm-up steps; a value below 1 is a fraction of all steps."
    )
    weight_decay: float = Field(0.0, ge=0)
    max_grad_norm: float | None = Field(None, ge=0, description="Gradient-norm clip; 0: none.")
    beta: float | None = Field(None, gt=0, description="dpo: strength of the KL penalty (β).")
    seed: int = 42
    dtype: Literal["auto", "bf16", "fp16", "fp32"] = Field(
        "auto", description="auto: bf16 on a GPU that has it, else fp32."
    )
    gradient_checkpointing: bool | None = Field(
        None, description="Trade compute for memory; default: on with a GPU, off on CPU."
    )
    num_workers: int = Field(0, ge=0, description="Data-loader worker processes.")

    # adapters and output
    lora: LoraSpec | None = None
    merge: bool = Field(True, description="Save LoRA merged into a plain model (else adapters).")
    resume: bool = Field(False, description="Continue from the last checkpoint in out/.")
    save_steps: int = Field(200, ge=1, description="Resumable checkpoint every N steps.")
    save_every: int | None = Field(
        None, ge=1, description="Save a full model to out/train_epoch_N every N epochs."
    )

    # logging
    logging_steps: int = Field(10, ge=1)
    report_to: ReportTo = "none"
    wandb_project: str | None = None
    run_name: str | None = None

    # rollout evaluation during training
    eval_every: int | None = Field(
        None, ge=1, description="Roll the model out on --eval-items every N epochs."
    )
    eval_steps: int | None = Field(None, ge=1, description="... or every N steps.")
    eval_items: Path | None = Field(None, description="AgentGym JSON file of the eval item ids.")
    env_server: list[str] = Field(default_factory=list, description="Env servers for eval.")
    max_rounds: int | None = Field(None, ge=1, description="Turns per eval episode.")
    eval_batch_size: int = Field(8, ge=1, description="Eval episodes in flight at once.")
    eval_view: StudentView = Field(
        default_factory=StudentView,
        description="How the model is shown its eval episodes: as its training data was built.",
    )

    # launch
    num_processes: int | None = Field(None, ge=1, description="Processes for accelerate launch.")
    accelerate_config: Path | None = Field(None, description="An accelerate config file.")

    @field_validator("lora", mode="before")
    @classmethod
    def _lora_from_text(cls, value: object) -> object:
        return LoraSpec.parse(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _consistent(self) -> TrainConfig:
        evaluating = self.eval_every is not None or self.eval_steps is not None
        if evaluating and (self.eval_items is None or self.env is None):
            raise ValueError("--eval-every/--eval-steps need --eval-items FILE and --env NAME")
        if self.method == "dpo":
            if self.template == "llama2":
                raise ValueError("--template llama2 is for bc/sft; dpo uses the chat template")
            if self.max_length is not None:
                raise ValueError("--max-length is for bc/sft; dpo trains on whole pairs")
        elif self.beta is not None:
            raise ValueError(f"--beta is for dpo; {self.method} has no reference model")
        # Fill what was left unset from the method's recipe, so the saved config says what ran.
        for name, value in METHOD_DEFAULTS[self.method]:
            if getattr(self, name) is None:
                setattr(self, name, value)
        return self

    @property
    def distributed(self) -> bool:
        """Launch through ``accelerate launch`` rather than in this process."""
        return self.accelerate_config is not None or (self.num_processes or 1) > 1

    @property
    def checkpoints(self) -> Path:
        return self.out / CHECKPOINTS_DIR

    @property
    def config_path(self) -> Path:
        return self.out / CONFIG_NAME

    @property
    def summary_path(self) -> Path:
        return self.out / SUMMARY_NAME

    def epoch_dir(self, epoch: int) -> Path:
        """AgentGym's name for the model saved after ``epoch`` epochs."""
        return self.out / f"train_epoch_{epoch}"
