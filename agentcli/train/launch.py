"""Start a training run: in this process, or as ``accelerate launch`` of the worker module.

``launch.num_processes`` N (N > 1) or ``launch.accelerate_config`` launches ``worker`` (by
default ``agentcli.train.worker``) once per process with the saved config; rank 0 writes the
model and ``train_summary.json``, which this process reads back when the launch ends.

The in-training eval is the caller's: ``evaluate`` runs in this process, and a distributed run's
``worker`` module builds its own from the config (a function cannot cross into the processes
accelerate starts). ``agentcli.train_eval.train`` passes both.

What the accelerate config asks for must be what runs. accelerate 1.15 turns FSDP (and
DeepSpeed) on only over GPUs: on CPU its state is ``MULTI_CPU`` and the model is wrapped in
DDP instead, without a word (``AcceleratorState`` sets ``DistributedType.FSDP`` only when the
type it starts from is a multi-accelerator one). So an FSDP or DeepSpeed config is refused
where torch sees no GPU. The precision is ours too: ``launch.dtype`` decides it and is passed
as ``--mixed_precision``, over the config file's ``mixed_precision`` (which TRL's arguments
would otherwise take from the environment: bf16 autocast on a CPU, say).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from agentcli.common import free_port
from agentcli.config import dump_config
from agentcli.conversation import StudentView
from agentcli.errors import AgentGymError, UsageError
from agentcli.train.arguments import precision
from agentcli.train.config import TrainConfig
from agentcli.train.model import require_model_dir
from agentcli.train.protocols import CheckpointEvaluator, EpisodePlayer, require_evaluator
from agentcli.train.run import TrainSummary
from agentcli.train.tracking import require_tracker
from agentcli.trained_view import data_view_path, model_view_path, read_view

WORKER = "agentcli.train.worker"
GPU_ONLY = {"FSDP": "FSDP", "DEEPSPEED": "DeepSpeed"}  # what accelerate runs on GPUs only


def accelerate_command(config: TrainConfig, worker: str, *, port: int) -> list[str]:
    """The ``accelerate launch`` command line. Without a config file, ``--multi_gpu`` is what
    starts N processes on GPUs and on CPU alike (gloo there): accelerate's MULTI_CPU mode
    silently runs one process. A config file that names its ``main_process_port`` keeps it
    (every machine of a multi-node run must meet there); otherwise ``port`` is used."""
    launch = config.launch
    command = [sys.executable, "-m", "accelerate.commands.launch"]
    given: dict[str, Any] = {}
    if launch.accelerate_config is not None:
        given = accelerate_file(launch.accelerate_config)
        command += ["--config_file", str(launch.accelerate_config)]
    else:
        command += ["--multi_gpu", "--num_machines", "1", "--dynamo_backend", "no"]
    command += ["--mixed_precision", mixed_precision(launch.dtype)]
    if launch.num_processes is not None:
        command += ["--num_processes", str(launch.num_processes)]
    if given.get("main_process_port") is None:
        command += ["--main_process_port", str(port)]
    return [*command, "-m", worker, str(config.config_path)]


def mixed_precision(dtype: str) -> str:
    """accelerate's name for the precision ``launch.dtype`` gives on this machine."""
    import torch

    cuda = torch.cuda.is_available()
    flags = precision(dtype, cuda=cuda, bf16_supported=cuda and torch.cuda.is_bf16_supported())
    return "bf16" if flags["bf16"] else "fp16" if flags["fp16"] else "no"


def accelerate_file(path: Path) -> dict[str, Any]:
    """An accelerate config file's settings (YAML, or JSON, which YAML reads too)."""
    try:
        settings = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(f"--accelerate-config {path}: cannot read it ({error.strerror})") from None
    except yaml.YAMLError:
        raise UsageError(f"--accelerate-config {path}: not YAML or JSON; fix the file") from None
    if not isinstance(settings, dict):
        raise UsageError(f"--accelerate-config {path}: not an accelerate config (a mapping)")
    return settings


def require_launchable(config: TrainConfig) -> None:
    """Refuse an accelerate config that would not run as it says here (see the module)."""
    path = config.launch.accelerate_config
    if path is None:
        return
    kind = str(accelerate_file(path).get("distributed_type", "")).upper()
    if kind not in GPU_ONLY:
        return
    import torch

    name = GPU_ONLY[kind]
    if not torch.cuda.is_available():
        raise UsageError(
            f"--accelerate-config {path} asks for {name}, which accelerate runs on GPUs only"
            " (without one it would train with DDP instead, silently); on CPU use"
            " configs/accelerate/ddp.yaml or --num-processes N"
        )
    if kind == "DEEPSPEED" and importlib.util.find_spec("deepspeed") is None:
        raise UsageError(
            f"--accelerate-config {path} asks for DeepSpeed, which is not installed:"
            " pip install deepspeed"
        )


def check_before_start(config: TrainConfig) -> None:
    """Fail in one line before any process starts or loads a model."""
    require_model_dir(config.model)
    require_tracker(config.hyperparameters.report_to)
    require_launchable(config)
    if config.data is not None and not config.data.is_file():
        raise UsageError(f"--data {config.data}: no such file; check the path")
    if config.resume:
        refuse_other_run(config)
    if not config.resume and config.checkpoints.is_dir() and any(config.checkpoints.iterdir()):
        raise UsageError(
            f"{config.checkpoints} holds checkpoints of an earlier run: pass --resume to continue"
            " it, or choose another --out"
        )
    refuse_another_view(config)
    if config.method == "grpo":
        from agentcli.train.played import load_reward_hook

        load_reward_hook(config.grpo.reward)  # a hook that does not import: one line, now
        return
    assert config.data is not None  # TrainConfig checks it
    # the data is read now, before anything is written to --out (and in a distributed run, so
    # that a bad line is one message, not one traceback per rank)
    from agentcli.train.datasets import load_chat_records, load_preference_records, named_envs

    records = (load_preference_records if config.method == "dpo" else load_chat_records)(
        config.data
    )
    named = named_envs(records)
    if config.env is not None and named and config.env not in named:  # the ids say their env
        raise UsageError(
            f"--data {config.data} holds {', '.join(sorted(named))} items, not {config.env}:"
            f" pass --task {sorted(named)[0]}, or the {config.env} data"
        )


def refuse_another_view(config: TrainConfig) -> None:
    """A model that learned under one view is not trained further on data rendered in
    another: it would keep neither (grpo's view is the model's own: ``TrainConfig``)."""
    learned, started = config.learned_view, read_view(model_view_path(config.model))
    if config.method == "grpo" or learned is None or started in (None, learned):
        return
    assert started is not None and config.data is not None
    name = next(n for n in StudentView.model_fields if getattr(learned, n) != getattr(started, n))
    raise UsageError(
        f"{config.model} was trained with view.{name}={getattr(started, name)!r}, but"
        f" {config.data} was rendered with {getattr(learned, name)!r}"
        f" ({data_view_path(config.data)}): build the data with the model's view (its"
        f" {model_view_path(config.model).name}), or start from another model"
    )


# Settings that may change between a run and its resumption: they do not shape the model.
RESUMABLE_CHANGES = ("resume", "launch.", "hyperparameters.report_to", "hyperparameters.run_name",
                     "hyperparameters.project", "hyperparameters.logging_steps",
                     "eval.env_server", "grpo.env_server")  # fmt: skip


def refuse_other_run(config: TrainConfig) -> None:
    """A resumed run continues the run in ``--out`` only with the settings it had (those of
    ``RESUMABLE_CHANGES`` aside): else one line naming what differs."""
    if not config.config_path.is_file():
        return
    from agentcli.config import config_as_data
    from agentcli.resume import changed_settings

    saved = yaml.safe_load(config.config_path.read_text(encoding="utf-8"))
    changes = [
        change
        for change in changed_settings(saved, config_as_data(config))
        if not change.startswith(RESUMABLE_CHANGES)
    ]
    if changes:
        raise UsageError(
            f"--resume: {config.out} holds a run of other settings ({'; '.join(changes)}):"
            " rerun with its settings, or choose another --out"
        )


def train(
    config: TrainConfig,
    *,
    evaluate: CheckpointEvaluator | None = None,
    play: EpisodePlayer | None = None,
    worker: str = WORKER,
) -> TrainSummary:
    """Train as ``config`` says; the summary of what ran. ``play`` plays grpo's episodes in
    this process; a distributed run's ``worker`` builds its own on each rank."""
    require_evaluator(config, evaluate)
    check_before_start(config)
    dump_config(config, config.config_path)
    if not config.distributed:
        from agentcli.train.run import run_training

        return run_training(config, evaluate=evaluate, play=play)
    command = accelerate_command(config, worker, port=free_port())
    returncode = subprocess.run(command, check=False).returncode
    if returncode != 0:
        raise AgentGymError(
            f"training stopped: accelerate launch exited with code {returncode}; the log above"
            " says why (rerun with --resume to continue from the last checkpoint)"
        )
    return TrainSummary(**json.loads(config.summary_path.read_text()))
