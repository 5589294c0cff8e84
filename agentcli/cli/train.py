"""``agentgym train bc|sft|dpo``: fine-tune a model on TRL, in this process or with accelerate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from agentcli.cli import _options
from agentcli.cli._output import stdout

app = typer.Typer(help="Train a model: bc (AgentGym behavioral cloning), sft, dpo.")


def _option(description: str, *names: str, kind: Any = int) -> Any:
    return Annotated[kind | None, typer.Option(*names, help=description, show_default=False)]


Data = Annotated[
    Path | None,
    typer.Option("--data", help="Training data file (see docs/train.md).", show_default=False),
]
TrainModel = Annotated[
    Path | None,
    typer.Option("--model", help="Model directory to start from (HF format).", show_default=False),
]
TrainOut = Annotated[
    Path | None,
    typer.Option("--out", "-o", help="Directory for the trained model.", show_default=False),
]
TrainEnv = _option("Environment (needed by --eval-every); --task is AgentGym's name.",
                   "--env", "--task", kind=str)  # fmt: skip
Template = _option("chat: the model's chat template; llama2: AgentGym's [INST] format.",
                   "--template", kind=str)  # fmt: skip
Overflow = _option("Over --max-length: truncate_left (drop early turns) or drop (bc/sft).",
                   "--overflow", kind=str)  # fmt: skip
MaxLength = _option("Tokens per example at most; early turns go first (bc/sft).", "--max-length")
BatchSize = _option("Examples per device per step (default: 4).", "--batch-size")
GradAccum = _option("Steps of gradients summed per update (default: 1).", "--grad-accum")
Epochs = _option("Epochs (default: per method).", "--epochs", kind=float)
LearningRate = _option("Peak learning rate (default: per method).", "--lr", kind=float)
Warmup = _option("Warm-up steps; below 1: a fraction of all steps.", "--warmup-steps", kind=float)
WeightDecay = _option("AdamW weight decay (default: 0).", "--weight-decay", kind=float)
MaxGradNorm = _option("Clip the gradient norm to this (default: per method).",
                      "--max-grad-norm", kind=float)  # fmt: skip
Beta = _option("dpo: KL penalty strength β (default: 0.1).", "--beta", kind=float)
TrainSeed = _option("Seed of the data order and initialisation (default: 42).", "--seed")
Lora = _option("Train LoRA adapters, e.g. r=64,alpha=128.", "--lora", kind=str)
Merge = Annotated[
    bool | None,
    typer.Option("--merge/--no-merge", help="Save LoRA merged into the model.", show_default=False),
]
Resume = Annotated[
    bool, typer.Option("--resume", help="Continue from the last checkpoint in --out.")
]
SaveEvery = _option("Save out/train_epoch_N every N epochs.", "--save-every")
SaveSteps = _option("Resumable checkpoint every N steps (default: 200).", "--save-steps")
LoggingSteps = _option("Log the loss every N steps (default: 10).", "--logging-steps")
EvalEvery = _option("Roll the model out on --eval-items every N epochs.", "--eval-every")
EvalSteps = _option("... or every N steps.", "--eval-steps")
EvalItems = _option("AgentGym JSON file whose item ids to evaluate on.", "--eval-items",
                    kind=Path)  # fmt: skip
ReportTo = _option("none | tensorboard | wandb | trackio (default: none).", "--report-to",
                   kind=str)  # fmt: skip
WandbProject = _option("wandb project.", "--wandb-project", kind=str)
RunName = _option("Run name for the tracker.", "--run-name", kind=str)
NumProcesses = _option("Processes to launch with accelerate (one per GPU).", "--num-processes")
AccelerateConfig = _option("accelerate config (configs/accelerate/*.yaml).",
                           "--accelerate-config", kind=Path)  # fmt: skip

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
}


def _command(method: str) -> Any:
    def command(
        data: Data = None,
        model: TrainModel = None,
        out: TrainOut = None,
        env: TrainEnv = None,
        template: Template = None,
        max_length: MaxLength = None,
        overflow: Overflow = None,
        batch_size: BatchSize = None,
        gradient_accumulation_steps: GradAccum = None,
        epochs: Epochs = None,
        learning_rate: LearningRate = None,
        warmup_steps: Warmup = None,
        weight_decay: WeightDecay = None,
        max_grad_norm: MaxGradNorm = None,
        beta: Beta = None,
        seed: TrainSeed = None,
        lora: Lora = None,
        merge: Merge = None,
        resume: Resume = False,
        save_every: SaveEvery = None,
        save_steps: SaveSteps = None,
        logging_steps: LoggingSteps = None,
        eval_every: EvalEvery = None,
        eval_steps: EvalSteps = None,
        eval_items: EvalItems = None,
        env_server: _options.EnvServer = None,
        max_rounds: _options.MaxRounds = None,
        report_to: ReportTo = None,
        wandb_project: WandbProject = None,
        run_name: RunName = None,
        num_processes: NumProcesses = None,
        accelerate_config: AccelerateConfig = None,
        config: _options.ConfigFile = None,
        print_config: _options.PrintConfig = False,
        overrides: _options.Overrides = None,
    ) -> None:
        options = dict(locals())
        for name in ("config", "print_config", "overrides"):
            del options[name]
        _train(method, options, config, print_config, overrides)

    command.__doc__ = _DOCS[method]
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

    options["resume"] = options["resume"] or None  # a flag left off does not override the file
    resolved = resolve_config(
        TrainConfig,
        config_file=config_file,
        cli={"method": method, **options},
        overrides=overrides or (),
    )
    if print_config:
        show_config(resolved)
        return
    from agentcli.train.launch import train

    summary = train(resolved)
    stdout.print(
        f"{method}: {summary.line()} → {resolved.out}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


for _method in ("bc", "sft", "dpo"):
    app.command(_method)(_command(_method))
