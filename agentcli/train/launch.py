"""Start a training run: in this process, or as ``accelerate launch`` of the worker module.

``launch.num_processes`` N (N > 1) or ``launch.accelerate_config`` launches ``worker`` (by
default ``agentcli.train.worker``) once per process with the saved config; rank 0 writes the
model and ``train_summary.json``, which this process reads back when the launch ends.

The in-training eval is the caller's: ``evaluate`` runs in this process, and a distributed run's
``worker`` module builds its own from the config (a function cannot cross into the processes
accelerate starts). ``agentcli.train_eval.train`` passes both.
"""

from __future__ import annotations

import json
import subprocess
import sys

from agentcli.common import free_port
from agentcli.config import dump_config
from agentcli.errors import AgentGymError, UsageError
from agentcli.train.config import TrainConfig
from agentcli.train.model import require_model_dir
from agentcli.train.run import CheckpointEvaluator, TrainSummary, require_evaluator
from agentcli.train.tracking import require_tracker

WORKER = "agentcli.train.worker"


def accelerate_command(config: TrainConfig, worker: str, *, port: int) -> list[str]:
    """The ``accelerate launch`` command line. Without a config file, ``--multi_gpu`` is what
    starts N processes on GPUs and on CPU alike (gloo there): accelerate's MULTI_CPU mode
    silently runs one process."""
    launch = config.launch
    command = [sys.executable, "-m", "accelerate.commands.launch"]
    if launch.accelerate_config is not None:
        command += ["--config_file", str(launch.accelerate_config)]
    else:
        command += ["--multi_gpu", "--num_machines", "1", "--mixed_precision", "no"]
        command += ["--dynamo_backend", "no"]
    if launch.num_processes is not None:
        command += ["--num_processes", str(launch.num_processes)]
    command += ["--main_process_port", str(port), "-m", worker, str(config.config_path)]
    return command


def check_before_start(config: TrainConfig) -> None:
    """Fail in one line before any process starts or loads a model."""
    require_model_dir(config.model)
    require_tracker(config.hyperparameters.report_to)
    if not config.data.is_file():
        raise UsageError(f"--data {config.data}: no such file; check the path")
    if not config.resume and config.checkpoints.is_dir() and any(config.checkpoints.iterdir()):
        raise UsageError(
            f"{config.checkpoints} holds checkpoints of an earlier run: pass --resume to continue"
            " it, or choose another --out"
        )
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


def train(
    config: TrainConfig,
    *,
    evaluate: CheckpointEvaluator | None = None,
    worker: str = WORKER,
) -> TrainSummary:
    """Train as ``config`` says; the summary of what ran."""
    require_evaluator(config, evaluate)
    check_before_start(config)
    dump_config(config, config.config_path)
    if not config.distributed:
        from agentcli.train.run import run_training

        return run_training(config, evaluate=evaluate)
    command = accelerate_command(config, worker, port=free_port())
    returncode = subprocess.run(command, check=False).returncode
    if returncode != 0:
        raise AgentGymError(
            f"training stopped: accelerate launch exited with code {returncode}; the log above"
            " says why (rerun with --resume to continue from the last checkpoint)"
        )
    return TrainSummary(**json.loads(config.summary_path.read_text()))
