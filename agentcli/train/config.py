"""``TrainConfig``: everything ``agentgym train bc|sft|dpo`` takes, with per-method defaults.

The config is the run's target (method, data, model, out, env, resume), the ``TrainSettings``
it trains with (``iterate``'s ``train:`` section is that model) and the in-training ``eval``:

- ``hyperparameters``: TRL's ``SFTConfig``/``DPOConfig`` keyword arguments under their own
  names; those left unset take the method's default (``METHOD_DEFAULTS``), filled in on
  validation: AgentGym's BC recipe for bc, LEAP's SFT recipe for sft, the usual DPO recipe for
  dpo.
- ``rendering``: how bc/sft conversations become token rows and batches.
- ``adapters``: LoRA, and whether to merge it into the saved model.
- ``saving``: whole models every N epochs (AgentGym's ``train_epoch_N``).
- ``launch``: processes, accelerate config, precision.
- ``eval``: rollouts of the model during training. It needs the env and its items, which
  ``iterate`` replaces with an eval stage of its own, so it is not part of ``TrainSettings``.

The resolved config is saved as ``<out>/train_config.yaml``; the distributed worker reads it
back from there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from agentcli.config import CommandConfig
from agentcli.conversation import StudentView
from agentcli.items import ItemSelection
from agentcli.train.advantages import Normalize
from agentcli.trained_view import data_view_path, model_view_path, read_view, view_for

Method = Literal["bc", "sft", "dpo", "grpo"]
ZeroVariance = Literal["drop", "keep"]
Unit = Literal["episode", "step"]
Advantage = Literal["grpo", "gigpo"]
Weighting = Literal["tokens", "episodes"]
Negatives = Literal["keep", "drop"]
Optimizer = Literal["adamw_torch", "sgd"]
ReportTo = Literal["none", "tensorboard", "wandb", "trackio"]
Scheduler = Literal["linear", "cosine", "constant", "constant_with_warmup"]
Template = Literal["chat", "llama2", "agentgym-bc"]
Overflow = Literal["truncate_left", "drop"]
Batching = Literal["auto", "padding_free", "grouped", "padded"]
Dtype = Literal["auto", "bf16", "fp16", "fp32"]

CONFIG_NAME = "train_config.yaml"
SUMMARY_NAME = "train_summary.json"
CHECKPOINTS_DIR = "checkpoints"


class MethodDefaults(BaseModel):
    """Values a method takes for the hyper-parameters left unset (None)."""

    learning_rate: float
    num_train_epochs: float
    lr_scheduler_type: Scheduler
    warmup_steps: float
    max_grad_norm: float
    beta: float | None = None


METHOD_DEFAULTS: dict[str, MethodDefaults] = {
    # AgentGym's train_behavioral_clone.sh: lr 1e-5, 1 epoch, linear decay, grad clip 1.
    "bc": MethodDefaults(
        learning_rate=1e-5,
        num_train_epochs=1,
        lr_scheduler_type="linear",
        warmup_steps=0,
        max_grad_norm=1.0,
    ),
    # LEAP's SFT recipe.
    "sft": MethodDefaults(
        learning_rate=3e-5,
        num_train_epochs=1,
        lr_scheduler_type="cosine",
        warmup_steps=10,
        max_grad_norm=0.3,
    ),
    "dpo": MethodDefaults(
        learning_rate=5e-7,
        num_train_epochs=1,
        lr_scheduler_type="linear",
        warmup_steps=0,
        max_grad_norm=1.0,
        beta=0.1,
    ),
    # TRL's GRPO defaults (no KL term unless asked: no reference model to hold).
    "grpo": MethodDefaults(
        learning_rate=1e-6,
        num_train_epochs=1,
        lr_scheduler_type="linear",
        warmup_steps=0,
        max_grad_norm=1.0,
        beta=0.0,
    ),
}


class Hyperparameters(CommandConfig):
    """TRL's ``SFTConfig``/``DPOConfig`` arguments, by their own names; None: the method's."""

    num_train_epochs: float | None = Field(None, gt=0, description="Epochs.")
    max_steps: int | None = Field(
        None, ge=1, description="Optimizer steps (updates) in all; unset: as the epochs take."
    )
    per_device_train_batch_size: int = Field(4, ge=1, description="Examples per device per step.")
    gradient_accumulation_steps: int = Field(
        1, ge=1, description="Steps of gradients summed per update."
    )
    learning_rate: float | None = Field(None, gt=0, description="Peak learning rate.")
    lr_scheduler_type: Scheduler | None = Field(None, description="Learning-rate schedule.")
    warmup_steps: float | None = Field(
        None, ge=0, description="Warm-up steps; a value below 1 is a fraction of all steps."
    )
    optim: Optimizer | None = Field(
        None,
        description="Optimizer. unset: AdamW (transformers' adamw_torch); sgd: plain SGD, whose"
        " step scales with the gradient (Adam's is about the learning rate, whatever its size).",
    )
    weight_decay: float = Field(0.0, ge=0, description="AdamW weight decay.")
    max_grad_norm: float | None = Field(None, ge=0, description="Gradient-norm clip; 0: none.")
    seed: int = Field(42, description="Seed of the initialisation and the data order.")
    activation_checkpointing: bool | None = Field(
        None,
        description="Gradient checkpointing (transformers 5's name): trade compute for memory;"
        " default: on with a GPU, off on CPU.",
    )
    dataloader_num_workers: int = Field(0, ge=0, description="Data-loader worker processes.")
    logging_steps: int = Field(10, ge=1, description="Log the loss every N steps.")
    save_steps: int = Field(200, ge=1, description="Resumable checkpoint every N steps.")
    report_to: ReportTo = Field(
        "none", description="Tracker the logs go to; where each writes: docs/train.md."
    )
    run_name: str | None = Field(
        None, description="The run's name in the tracker (and its TensorBoard folder)."
    )
    project: str | None = Field(
        None, description="Tracker project, trackio's or wandb's; default: huggingface."
    )
    beta: float | None = Field(
        None,
        ge=0,
        description="dpo, grpo: strength of the KL penalty (β); 0: none (no reference model).",
    )
    sft_weight: float | None = Field(
        None,
        gt=0,
        description="dpo: weight of an SFT loss on the chosen replies beside DPO's sigmoid loss"
        " (TRL's loss types sigmoid and sft); it keeps the chosen replies likely while DPO"
        " widens the margin. Unset: DPO alone.",
    )


class Rendering(CommandConfig):
    """bc/sft: how conversations become token rows and batches (dpo trains whole pairs)."""

    template: Template = Field(
        "chat",
        description="chat: the model's chat template; llama2: AgentGym's [INST] format;"
        " agentgym-bc: its BCTrainer's tokens (a space before each reply).",
    )
    max_length: int | None = Field(
        None, ge=8, description="Tokens per example at most; a longer one is cut by overflow."
    )
    overflow: Overflow = Field(
        "truncate_left",
        description="An example over max_length: truncate_left drops its earliest turns, whole;"
        " drop leaves the example out.",
    )
    batching: Batching = Field(
        "auto",
        description="How a batch becomes tensors. padding_free: a batch's examples in one row,"
        " no padding; grouped: batches"
        " of similar lengths, padded; padded: random batches, padded; auto: padding_free on a"
        " GPU, grouped on CPU.",
    )
    share_prefix: bool = Field(
        True,
        description="Compute the untrained opening that a padded batch's rows share once per"
        " batch, not once per row (same loss and gradients).",
    )


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


class Adapters(CommandConfig):
    """LoRA adapters instead of full fine-tuning."""

    lora: LoraSpec | None = Field(
        None, description="Train LoRA adapters, e.g. r=64,alpha=128; none: every weight."
    )
    merge: bool = Field(
        True, description="Save LoRA merged into a plain model (else the adapters alone)."
    )

    @field_validator("lora", mode="before")
    @classmethod
    def _lora_from_text(cls, value: object) -> object:
        return LoraSpec.parse(value) if isinstance(value, str) else value


class Saving(CommandConfig):
    """Whole models saved along the way (resumable checkpoints: ``hyperparameters.save_steps``)."""

    every: int | None = Field(
        None, ge=1, description="Save a full model to out/train_epoch_N every N epochs."
    )


class Launch(CommandConfig):
    """Where and how the training processes run."""

    num_processes: int | None = Field(
        None, ge=1, description="Processes to launch with accelerate (one per GPU)."
    )
    accelerate_config: Path | None = Field(
        None, description="An accelerate config file (configs/accelerate/*.yaml)."
    )
    dtype: Dtype = Field(
        "auto", description="Precision. auto: bf16 on a GPU that has it, else fp32."
    )


class GrpoSettings(CommandConfig):
    """grpo: the items its groups play, how they play them, and how their rewards become an
    update."""

    items: ItemSelection = Field(
        default_factory=ItemSelection, description="Training items of each env."
    )
    num_generations: int = Field(
        8, ge=2, description="Group size: episodes played of each item per update."
    )
    max_turns: int | None = Field(
        None, ge=1, description="Turns per episode at most; default: the env's max_rounds."
    )
    max_new_tokens: int = Field(128, ge=1, description="Tokens per reply at most.")
    temperature: float = Field(1.0, gt=0, description="Sampling temperature of the episodes.")
    zero_variance: ZeroVariance = Field(
        "drop",
        description="Groups whose episodes all earned the same reward (no signal): drop their"
        " tokens from the loss, or keep them (TRL's way: zero advantage, still counted).",
    )
    reward: str | None = Field(
        None,
        description="Reward shaping: a python 'module:function' taking the Episode, returning"
        " its reward (default: the env's score).",
    )
    unit: Unit = Field(
        "episode",
        description="A sample: an episode (TRL's GRPO, the whole conversation one sequence:"
        " views without a history window), or a step (prompted as the student saw it: any"
        " view).",
    )
    advantage: Advantage = Field(
        "grpo",
        description="grpo: an episode's reward against its group's, for each of its steps;"
        " gigpo (unit step): plus step_weight times a step's return against the other steps of"
        " its group taken from the same observation.",
    )
    step_weight: float = Field(1.0, ge=0, description="gigpo: weight of the step-level advantage.")
    gamma: float = Field(
        0.95,
        ge=0,
        le=1,
        description="gigpo: discount of a step's return (the episode's reward × γ^k, k steps"
        " before the episode's end).",
    )
    normalize: Normalize = Field(
        "std",
        description="Advantages divided by their group's standard deviation (std), or only"
        " centred on its mean (none).",
    )
    weighting: Weighting = Field(
        "tokens",
        description="unit step: what the update averages over. tokens: every trained token"
        " alike, so an episode weighs as many times as it has steps (long lost episodes"
        " outweigh short won ones); episodes: each episode's steps share one episode's weight.",
    )
    negatives: Negatives = Field(
        "keep",
        description="unit step: samples whose advantage is negative. keep: the policy gradient;"
        " drop: train only the samples that did better than their group (self-imitation), so"
        " that lost episodes do not push down the moves they share with won ones.",
    )

    @model_validator(mode="after")
    def _advantage_settings(self) -> GrpoSettings:
        if self.advantage == "gigpo" and self.unit != "step":
            raise ValueError(
                "gigpo's step-level groups need step samples: add --unit step (grpo.unit: step)"
            )
        if self.weighting == "episodes" and self.unit != "step":
            raise ValueError(
                "weighting episodes shares an episode's weight among its step samples; with"
                " --unit episode an episode is one sample already: add --unit step or drop it"
            )
        if self.negatives == "drop" and self.unit != "step":
            raise ValueError(
                "negatives drop filters step samples; with --unit episode TRL computes the"
                " advantages: add --unit step or drop it"
            )
        if self.advantage == "grpo":
            for name in ("step_weight", "gamma"):  # by value: a saved config lists every key
                if getattr(self, name) != type(self).model_fields[name].default:
                    raise ValueError(f"grpo.{name} is gigpo's: add --advantage gigpo or drop it")
        return self


class GrpoConfig(GrpoSettings):
    """grpo: its ``GrpoSettings``, the envs it plays, their servers and the student's view."""

    envs: list[str] = Field(default_factory=list, description="Environments to play.")
    env_server: list[str] = Field(
        default_factory=list,
        description="Env server URLs (one env; round-robin); none: start built-in servers.",
    )
    view: StudentView = Field(
        default_factory=StudentView,
        description="How the model is shown its episodes: as its training data was built.",
    )


class TrainSettings(CommandConfig):
    """`agentgym train`: how to train, whatever the data and model (unset hyper-parameters take
    the method's recipe)."""

    hyperparameters: Hyperparameters = Field(
        default_factory=Hyperparameters,
        description="TRL's training arguments by their names; unset: the method's recipe.",
    )
    rendering: Rendering = Field(
        default_factory=Rendering, description="bc/sft: conversations to token rows and batches."
    )
    adapters: Adapters = Field(default_factory=Adapters, description="LoRA adapters.")
    saving: Saving = Field(default_factory=Saving, description="Whole models along the way.")
    launch: Launch = Field(default_factory=Launch, description="Processes and precision.")


class TrainTarget(CommandConfig):
    """What one run trains: the method, its data, the model it starts from, where it writes."""

    method: Method = Field(
        description="bc: AgentGym conversations; sft: chat records; dpo; grpo: online RL."
    )
    data: Path | None = Field(
        None, description="Training data (AgentGym JSON, chat JSONL or preference JSONL); not grpo."
    )
    model: Path = Field(description="Model directory to start from (HF format).")
    out: Path = Field(description="Directory for the trained model, checkpoints and logs.")
    env: str | None = Field(
        None,
        description="Environment of the data (AgentGym calls it the task); the in-training eval"
        " needs it.",
    )
    resume: bool = Field(False, description="Continue from the last checkpoint in out/.")


class TrainingEval(CommandConfig):
    """Rollouts of the model on held-out items during training, logged next to the loss."""

    every: int | None = Field(
        None, ge=1, description="Roll the model out on the eval items every N epochs."
    )
    steps: int | None = Field(None, ge=1, description="... or every N steps.")
    items: Path | None = Field(
        None, description="AgentGym JSON file whose item ids to evaluate on."
    )
    env_server: list[str] = Field(
        default_factory=list,
        description="Env server URLs for the eval (round-robin); none: start a built-in server.",
    )
    max_rounds: int | None = Field(
        None, ge=1, description="Turns per eval episode; default: the env's."
    )
    batch_size: int = Field(8, ge=1, description="Eval episodes in flight at once.")
    view: StudentView = Field(
        default_factory=StudentView,
        description="How the model is shown its eval episodes: as its training data was built.",
    )

    @property
    def enabled(self) -> bool:
        return self.every is not None or self.steps is not None


class TrainConfig(TrainSettings, TrainTarget):
    """``agentgym train bc|sft|dpo|grpo``: a ``TrainTarget``, its ``TrainSettings`` and the
    eval."""

    eval: TrainingEval = Field(
        default_factory=TrainingEval, description="Rollouts during training."
    )
    grpo: GrpoConfig = Field(
        default_factory=GrpoConfig, description="grpo: its envs, episodes and groups."
    )

    @model_validator(mode="after")
    def _consistent(self) -> TrainConfig:
        if self.eval.enabled and (self.eval.items is None or self.env is None):
            raise ValueError("--eval-every/--eval-steps need --eval-items FILE and --env NAME")
        if self.method == "grpo":
            self._check_grpo()
        elif self.data is None:
            raise ValueError(f"{self.method} trains on a file: pass --data FILE")
        elif self.grpo != GrpoConfig():
            raise ValueError(f"the grpo section is for grpo; {self.method} trains on --data")
        elif self.eval.enabled:  # the in-training eval shows the model the view it learns under
            view = view_for(self.eval.view, self.learned_view, of=f"the model of {self.data}")
            self.eval = self.eval.model_copy(update={"view": view})
        hyperparameters = self.hyperparameters
        if self.method in ("dpo", "grpo"):
            changed = [
                name
                for name, value in self.rendering
                if value != Rendering.model_fields[name].default
            ]
            if changed:
                raise ValueError(
                    f"rendering.{changed[0]} is for bc/sft; {self.method} renders with the"
                    " chat template"
                )
        elif hyperparameters.beta is not None:
            raise ValueError(f"--beta is for dpo and grpo; {self.method} has no reference model")
        if hyperparameters.sft_weight is not None and self.method != "dpo":
            raise ValueError(f"--sft-weight is dpo's; {self.method} has no preference loss")
        if self.method == "dpo" and hyperparameters.beta == 0:
            raise ValueError("dpo's --beta must be above 0")
        # Fill what was left unset from the method's recipe, so the saved config says what ran
        # (in a copy: the section given may be another config's, e.g. iterate's).
        unset = {
            name: value
            for name, value in METHOD_DEFAULTS[self.method]
            if getattr(hyperparameters, name) is None
        }
        self.hyperparameters = hyperparameters.model_copy(update=unset)
        return self

    def _check_grpo(self) -> None:
        # its episodes show the model the view it was trained with
        view = view_for(self.grpo.view, read_view(model_view_path(self.model)), of=str(self.model))
        if self.grpo.unit == "episode" and not view.whole_conversation:
            raise ValueError(  # an episode trains as one sequence, every turn in it
                "grpo --unit episode trains each episode as one multi-turn conversation, and"
                f" {view.why_not_whole}: train it with --unit step (each step as the student"
                " saw it)"
            )
        grpo = self.grpo = self.grpo.model_copy(update={"view": view})
        if self.data is not None:
            raise ValueError("grpo plays its episodes: it takes --env, not --data")
        if not grpo.envs:
            raise ValueError("grpo needs the environments to play: pass --env NAME")
        if self.eval.enabled:
            raise ValueError("grpo has no in-training eval: evaluate its model with agentgym eval")
        if "per_device_train_batch_size" not in self.hyperparameters.model_fields_set:
            # one group per step unless told otherwise
            self.hyperparameters = self.hyperparameters.model_copy(
                update={"per_device_train_batch_size": grpo.num_generations}
            )
        per_device = self.hyperparameters.per_device_train_batch_size
        if grpo.unit == "step" and per_device % grpo.num_generations:
            raise ValueError(  # a batch plays its items' whole groups
                f"--batch-size {per_device} episodes must be whole groups of --group"
                f" {grpo.num_generations}"
            )
        episodes = per_device * self.hyperparameters.gradient_accumulation_steps
        if episodes % grpo.num_generations:
            raise ValueError(
                f"a step's episodes (--batch-size × --grad-accum = {episodes}) must be whole"
                f" groups of --group {grpo.num_generations}"
            )

    @property
    def learned_view(self) -> StudentView | None:
        """The view the model learns under, which it keeps (``agentcli.trained_view``): grpo's,
        else the one its data was rendered with (None: data written elsewhere)."""
        if self.method == "grpo":
            return self.grpo.view
        assert self.data is not None  # _consistent checks it
        return read_view(data_view_path(self.data))

    @property
    def distributed(self) -> bool:
        """Launch through ``accelerate launch`` rather than in this process."""
        launch = self.launch
        return launch.accelerate_config is not None or (launch.num_processes or 1) > 1

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
