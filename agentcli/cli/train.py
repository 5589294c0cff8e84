"""``agentgym train bc|sft|dpo|grpo``: fine-tune a model on TRL, in this process or with accelerate.

Each method lists only the options it takes: the option groups are declared once below, each
option with the ``TrainConfig`` field it sets (which gives its type, default and help), and
each method's command is built from the groups it takes (dpo has no rendering options, grpo
plays envs instead of reading ``--data``). Hyper-parameters left unset take the method's recipe,
which ``--help`` shows as their defaults.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import typer

from agentcli.cli import _options
from agentcli.cli._options import Group, Option
from agentcli.cli._output import stdout
from agentcli.train.config import METHOD_DEFAULTS, TrainConfig

app = typer.Typer(help="Train a model: bc (AgentGym behavioral cloning), sft, dpo, grpo.")


def _panel(title: str, group: Group) -> Group:
    """``group`` listed under ``title`` in --help."""
    return {name: replace(option, panel=title) for name, option in group.items()}


TARGET = _panel("Target", {
    "data": Option(),
    "model": Option(),
    "out": Option(flags=("--out", "-o")),  # -o: its short form, as in `model tiny`
    "env": Option(flags=("--env", "--task")),  # --task: AgentGym's name for it
    "resume": Option(),
})  # fmt: skip
RECIPE = "Hyper-parameters (default: the method's recipe, see docs/train.md)"
HYPERPARAMETERS = _panel(RECIPE, {
    "epochs": Option("hyperparameters.num_train_epochs"),
    "lr": Option("hyperparameters.learning_rate"),
    "lr_scheduler": Option("hyperparameters.lr_scheduler_type"),
    "warmup_steps": Option("hyperparameters.warmup_steps"),
    "batch_size": Option("hyperparameters.per_device_train_batch_size"),
    "grad_accum": Option("hyperparameters.gradient_accumulation_steps"),
    "weight_decay": Option("hyperparameters.weight_decay"),
    "optim": Option("hyperparameters.optim"),
    "max_grad_norm": Option("hyperparameters.max_grad_norm"),
    "seed": Option("hyperparameters.seed"),
    "logging_steps": Option("hyperparameters.logging_steps"),
    "save_steps": Option("hyperparameters.save_steps"),
    "report_to": Option("hyperparameters.report_to"),
    "run_name": Option("hyperparameters.run_name"),
    # --wandb-project: the name wandb users know it by
    "project": Option("hyperparameters.project", flags=("--project", "--wandb-project")),
})  # fmt: skip
BETA = _panel(RECIPE, {
    "beta": Option("hyperparameters.beta"),
    "sft_weight": Option("hyperparameters.sft_weight"),
})  # fmt: skip
RENDERING = _panel("Rendering", {
    "template": Option("rendering.template"),
    "max_length": Option("rendering.max_length"),
    "overflow": Option("rendering.overflow"),
    "batching": Option("rendering.batching"),
})  # fmt: skip
ADAPTERS = _panel("Adapters and saving", {
    # a section on the field; the shell gives it as text (r=64,alpha=128), which the field parses
    "lora": Option("adapters.lora", type=str),
    "merge": Option("adapters.merge"),
    "save_every": Option("saving.every"),
})  # fmt: skip
EVAL = _panel("Eval during training", {
    "eval_every": Option("eval.every"),
    "eval_steps": Option("eval.steps"),
    "eval_items": Option("eval.items"),
    "env_server": Option("eval.env_server"),
    "max_rounds": Option("eval.max_rounds"),
})  # fmt: skip
LAUNCH = _panel("Launch", {
    "num_processes": Option("launch.num_processes"),
    "accelerate_config": Option("launch.accelerate_config"),
    "dtype": Option("launch.dtype"),
})  # fmt: skip

GRPO_TARGET = {
    **{name: TARGET[name] for name in ("model", "out", "resume")},
    **_panel("Target", {"env": Option("grpo.envs")}),
}
GRPO_ITEMS = _panel("Training items", {
    "split": Option("grpo.items.split"),
    "limit": Option("grpo.items.limit"),
    "skip": Option("grpo.items.skip"),
    "items": Option("grpo.items.data"),
})  # fmt: skip
GRPO = _panel("Episodes and groups", {
    "group": Option("grpo.num_generations"),
    "max_turns": Option("grpo.max_turns"),
    "max_new_tokens": Option("grpo.max_new_tokens"),
    "temperature": Option("grpo.temperature"),
    "unit": Option("grpo.unit"),
    "advantage": Option("grpo.advantage"),
    "step_weight": Option("grpo.step_weight"),
    "gamma": Option("grpo.gamma"),
    "normalize": Option("grpo.normalize"),
    "zero_variance": Option("grpo.zero_variance"),
    "weighting": Option("grpo.weighting"),
    "negatives": Option("grpo.negatives"),
    "reward": Option("grpo.reward"),
    "env_server": Option("grpo.env_server"),
    "beta": Option("hyperparameters.beta"),
    "max_steps": Option("hyperparameters.max_steps"),
})  # fmt: skip
GRPO_HYPERPARAMETERS = {
    **HYPERPARAMETERS,
    # grpo fills it in with one group of episodes (TrainConfig._check_grpo), not the field's 4
    "batch_size": replace(
        HYPERPARAMETERS["batch_size"],
        help="Episodes per device per step; default: one group (--group).",
        show_default=False,
    ),
}

METHOD_OPTIONS: dict[str, list[Group]] = {
    "bc": [TARGET, HYPERPARAMETERS, RENDERING, ADAPTERS, EVAL, LAUNCH],
    "sft": [TARGET, HYPERPARAMETERS, RENDERING, ADAPTERS, EVAL, LAUNCH],
    "dpo": [TARGET, HYPERPARAMETERS, BETA, ADAPTERS, EVAL, LAUNCH],
    "grpo": [GRPO_TARGET, GRPO_ITEMS, GRPO, GRPO_HYPERPARAMETERS, ADAPTERS, LAUNCH],
}

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
    "grpo": """Online RL: GRPO or GiGPO on episodes the model plays in the envs (docs/rl.md).

    Example: agentgym train grpo --model runs/x/iter0/model --env babyai-putnext --limit 64
    --group 8 --unit step --advantage gigpo --max-steps 50 --out runs/x/gigpo
    """,
}


def _recipe(method: str) -> dict[str, Any]:
    """What ``method``'s recipe fills in for the hyper-parameters left unset, by key."""
    return {
        f"hyperparameters.{name}": value
        for name, value in METHOD_DEFAULTS[method]
        if value is not None
    }


def _command(method: str) -> Callable[..., None]:
    def run(resolved: TrainConfig) -> None:
        from agentcli.train_eval import train

        summary = train(resolved)
        stdout.print(
            f"{method}: {summary.line()} → {resolved.out}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )

    command = _options.command(
        _DOCS[method],
        *METHOD_OPTIONS[method],
        config=TrainConfig,
        run=run,
        fixed={"method": method},
        filled=_recipe(method),
    )
    command.__name__ = method
    return command


for _method in METHOD_OPTIONS:
    app.command(_method)(_command(_method))
