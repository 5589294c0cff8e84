"""``agentgym train bc|sft|dpo|grpo``: fine-tune a model on TRL, in this process or with accelerate.

Each method lists only the options it takes: the option groups are declared once below, each
option with the ``TrainConfig`` key it sets, and every command's signature is built from the
groups its method takes (dpo has no rendering options, grpo plays envs instead of reading
``--data``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from agentcli.cli import _options
from agentcli.cli._output import stdout
from agentcli.train.config import (
    Batching,
    Dtype,
    Overflow,
    ReportTo,
    Scheduler,
    Template,
    ZeroVariance,
)

app = typer.Typer(help="Train a model: bc (AgentGym behavioral cloning), sft, dpo, grpo.")


@dataclass(frozen=True)
class _TrainOption:
    """One command-line option: its parameter name, the config key it sets, its type."""

    name: str
    key: str
    annotation: Any
    default: Any = None


def _option(name: str, key: str, kind: Any, *flags: str, help: str, panel: str) -> _TrainOption:
    option = typer.Option(*flags, help=help, show_default=False, rich_help_panel=panel)
    return _TrainOption(name, key, Annotated[kind | None, option])


TARGET = "Target"
HYPERPARAMETERS = "Hyper-parameters (default: the method's recipe, see docs/train.md)"
RENDERING = "Rendering"
ADAPTERS = "Adapters and saving"
EVAL = "Eval during training"
LAUNCH = "Launch"
ITEMS = "Training items"
GRPO = "Episodes and groups"

TARGET_OPTIONS = [
    _option("data", "data", Path, "--data", help="Training data file (see docs/train.md).",
            panel=TARGET),
    _option("model", "model", Path, "--model", help="Model directory to start from (HF format).",
            panel=TARGET),
    _option("out", "out", Path, "--out", "-o", help="Directory for the trained model.",
            panel=TARGET),
    _option("env", "env", str, "--env", "--task",
            help="Environment (needed by --eval-every); --task is AgentGym's name.", panel=TARGET),
    _TrainOption(
        "resume",
        "resume",
        Annotated[
            bool,
            typer.Option(
                "--resume", help="Continue from the last checkpoint in --out.",
                rich_help_panel=TARGET,
            ),
        ],
        default=False,
    ),
]  # fmt: skip
HYPERPARAMETER_OPTIONS = [
    _option(name, f"hyperparameters.{key}", kind, flag, help=text, panel=HYPERPARAMETERS)
    for name, key, kind, flag, text in [
        ("epochs", "num_train_epochs", float, "--epochs", "Epochs."),
        ("learning_rate", "learning_rate", float, "--lr", "Peak learning rate."),
        ("lr_scheduler", "lr_scheduler_type", Scheduler, "--lr-scheduler",
         "Learning-rate schedule."),
        ("warmup_steps", "warmup_steps", float, "--warmup-steps",
         "Warm-up steps; below 1: a fraction of all steps."),
        ("batch_size", "per_device_train_batch_size", int, "--batch-size",
         "Examples per device per step (default: 4)."),
        ("gradient_accumulation_steps", "gradient_accumulation_steps", int, "--grad-accum",
         "Steps of gradients summed per update (default: 1)."),
        ("weight_decay", "weight_decay", float, "--weight-decay",
         "AdamW weight decay (default: 0)."),
        ("max_grad_norm", "max_grad_norm", float, "--max-grad-norm",
         "Clip the gradient norm to this."),
        ("seed", "seed", int, "--seed", "Seed of the data order and initialisation (default: 42)."),
        ("logging_steps", "logging_steps", int, "--logging-steps",
         "Log the loss every N steps (default: 10)."),
        ("save_steps", "save_steps", int, "--save-steps",
         "Resumable checkpoint every N steps (default: 200)."),
        ("report_to", "report_to", ReportTo, "--report-to",
         "Tracker the logs go to (default: none); where each writes: docs/train.md."),
        ("run_name", "run_name", str, "--run-name",
         "The run's name in the tracker (and its TensorBoard folder)."),
    ]
] + [
    _option("project", "hyperparameters.project", str, "--project", "--wandb-project",
            help="Tracker project, trackio's or wandb's (default: huggingface).",
            panel=HYPERPARAMETERS),
]  # fmt: skip
BETA_OPTIONS = [
    _option("beta", "hyperparameters.beta", float, "--beta",
            help="KL penalty strength β (default: 0.1).", panel=HYPERPARAMETERS),
]  # fmt: skip
RENDERING_OPTIONS = [
    _option(name, f"rendering.{name}", kind, flag, help=text, panel=RENDERING)
    for name, kind, flag, text in [
        ("template", Template, "--template",
         "chat: the model's chat template; llama2: AgentGym's [INST] format; agentgym-bc:"
         " its BCTrainer's tokens (a space before each reply)."),
        ("max_length", int, "--max-length", "Tokens per example at most; early turns go first."),
        ("overflow", Overflow, "--overflow",
         "Over --max-length: drop early turns (truncate_left) or the example (drop)."),
        ("batching", Batching, "--batching",
         "How a batch becomes tensors (default: auto, see docs/train.md)."),
    ]
]  # fmt: skip
ADAPTER_OPTIONS = [
    _option("lora", "adapters.lora", str, "--lora",
            help="Train LoRA adapters, e.g. r=64,alpha=128.", panel=ADAPTERS),
    _option("merge", "adapters.merge", bool, "--merge/--no-merge",
            help="Save LoRA merged into the model.", panel=ADAPTERS),
    _option("save_every", "saving.every", int, "--save-every",
            help="Save out/train_epoch_N every N epochs.", panel=ADAPTERS),
]  # fmt: skip
EVAL_OPTIONS = [
    _option("eval_every", "eval.every", int, "--eval-every",
            help="Roll the model out on --eval-items every N epochs.", panel=EVAL),
    _option("eval_steps", "eval.steps", int, "--eval-steps", help="... or every N steps.",
            panel=EVAL),
    _option("eval_items", "eval.items", Path, "--eval-items",
            help="AgentGym JSON file whose item ids to evaluate on.", panel=EVAL),
    _option("env_server", "eval.env_server", list[str], "--env-server",
            help="Env server URL; repeat for several (round-robin). Default: start a built-in"
            " one.", panel=EVAL),
    _option("max_rounds", "eval.max_rounds", int, "--max-rounds",
            help="Turns per eval episode (default: the env's).", panel=EVAL),
]  # fmt: skip
LAUNCH_OPTIONS = [
    _option("num_processes", "launch.num_processes", int, "--num-processes",
            help="Processes to launch with accelerate (one per GPU).", panel=LAUNCH),
    _option("accelerate_config", "launch.accelerate_config", Path, "--accelerate-config",
            help="accelerate config (configs/accelerate/*.yaml).", panel=LAUNCH),
    _option("dtype", "launch.dtype", Dtype, "--dtype",
            help="Precision (default: auto: bf16 on a GPU that has it, else fp32).",
            panel=LAUNCH),
]  # fmt: skip

GRPO_TARGET_OPTIONS = [
    option for option in TARGET_OPTIONS if option.name in ("model", "out", "resume")
] + [
    _option("env", "grpo.envs", list[str], "--env",
            help="Environment to play; repeat for several.", panel=TARGET),
]  # fmt: skip
ITEM_OPTIONS = [
    _option(name, f"grpo.items.{key}", kind, flag, help=text, panel=ITEMS)
    for name, key, kind, flag, text in [
        ("split", "split", str, "--split", "Split of each env to train on (default: train)."),
        ("limit", "limit", int, "--limit", "Only its first N items."),
        ("skip", "skip", int, "--skip", "Skip its first N items."),
        ("items", "data", Path, "--items", "AgentGym JSON file whose item ids to train on."),
    ]
]  # fmt: skip
GRPO_OPTIONS = [
    _option(name, key, kind, flag, help=text, panel=GRPO)
    for name, key, kind, flag, text in [
        ("group", "grpo.num_generations", int, "--group",
         "Episodes played of each item per update (default: 8)."),
        ("max_turns", "grpo.max_turns", int, "--max-turns",
         "Turns per episode at most (default: the env's)."),
        ("max_new_tokens", "grpo.max_new_tokens", int, "--max-new-tokens",
         "Tokens per reply at most (default: 128)."),
        ("temperature", "grpo.temperature", float, "--temperature",
         "Sampling temperature of the episodes (default: 1)."),
        ("zero_variance", "grpo.zero_variance", ZeroVariance, "--zero-variance",
         "Groups whose episodes all earned one reward: drop them from the loss (default) or"
         " keep them."),
        ("reward", "grpo.reward", str, "--reward",
         "Reward shaping: module:function of the Episode (default: the env's score)."),
        ("env_server", "grpo.env_server", list[str], "--env-server",
         "Env server URL; repeat for several (round-robin). Default: start a built-in one."),
        ("beta", "hyperparameters.beta", float, "--beta",
         "KL penalty strength β (default: 0, no reference model)."),
        ("max_steps", "hyperparameters.max_steps", int, "--max-steps",
         "Updates in all (default: --epochs over the items)."),
    ]
]  # fmt: skip

METHOD_OPTIONS: dict[str, list[_TrainOption]] = {
    "bc": [*TARGET_OPTIONS, *HYPERPARAMETER_OPTIONS, *RENDERING_OPTIONS, *ADAPTER_OPTIONS,
           *EVAL_OPTIONS, *LAUNCH_OPTIONS],
    "sft": [*TARGET_OPTIONS, *HYPERPARAMETER_OPTIONS, *RENDERING_OPTIONS, *ADAPTER_OPTIONS,
            *EVAL_OPTIONS, *LAUNCH_OPTIONS],
    "dpo": [*TARGET_OPTIONS, *HYPERPARAMETER_OPTIONS, *BETA_OPTIONS, *ADAPTER_OPTIONS,
            *EVAL_OPTIONS, *LAUNCH_OPTIONS],
    "grpo": [*GRPO_TARGET_OPTIONS, *ITEM_OPTIONS, *GRPO_OPTIONS, *HYPERPARAMETER_OPTIONS,
             *ADAPTER_OPTIONS, *LAUNCH_OPTIONS],
}  # fmt: skip
# Every command ends with the options every agentgym command has.
CONFIG_OPTIONS = [
    _TrainOption("config", "", _options.ConfigFile),
    _TrainOption("print_config", "", _options.PrintConfig, default=False),
    _TrainOption("overrides", "", _options.Overrides),
]

_DOCS = {
    "bc": """Behavioral cloning on AgentGym conversations (the agent's turns only).

    Example: agentgym train bc --task textcraft --data agenttraj.json --model models/tiny
    --out runs/x/bc
    """,
    "sft": """Supervised fine-tuning on chat records with loss flags, or prompt/response pairs.

    Example: agentgym train sft --data runs/x/iter1/data/sft.jsonl --model runs/x/iter0/model
    --out runs/x/iter1/model
    """,
    "dpo": """Direct preference optimisation on {prompt, chosen, rejected} records.

    Example: agentgym train dpo --data runs/x/iter1/data/dpo.jsonl --model runs/x/iter0/model
    --out runs/x/iter1/model-dpo --beta 0.1
    """,
    "grpo": """Online RL: GRPO on episodes the model plays in the envs (docs/rl.md).

    Example: agentgym train grpo --model runs/x/iter0/model --env babyai-putnext --limit 64
    --group 8 --max-steps 50 --out runs/x/grpo
    """,
}


def _command(method: str) -> Callable[..., None]:
    """The command of ``method``: a function whose signature lists its method's options."""
    options = METHOD_OPTIONS[method]

    def command(**values: Any) -> None:
        cli = {option.key: values[option.name] for option in options}
        cli["resume"] = cli["resume"] or None  # a flag left off does not override the file
        _train(method, cli, values["config"], values["print_config"], values["overrides"])

    parameters = [
        inspect.Parameter(
            option.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=option.default,
            annotation=option.annotation,
        )
        for option in [*options, *CONFIG_OPTIONS]
    ]
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    command.__doc__ = _DOCS[method]
    command.__name__ = method
    return command


def _train(
    method: str,
    options: dict[str, Any],
    config_file: Path | None,
    print_config: bool,
    overrides: list[str] | None,
) -> None:
    from agentcli.cli._output import show_config
    from agentcli.config import resolve_config
    from agentcli.train.config import TrainConfig

    resolved = resolve_config(
        TrainConfig,
        config_file=config_file,
        cli={"method": method, **options},
        overrides=overrides or (),
    )
    if print_config:
        show_config(resolved)
        return
    from agentcli.train_eval import train

    summary = train(resolved)
    stdout.print(
        f"{method}: {summary.line()} → {resolved.out}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


for _method in METHOD_OPTIONS:
    app.command(_method)(_command(_method))
