"""Where ``--report-to`` sends a training run's logs, and under which name.

transformers' tracker callbacks read their places from the environment: TensorBoard's writer
its directory (``TENSORBOARD_LOGGING_DIR``, read when the trainer is built; otherwise
``<output_dir>/runs/<date>_<host>``, inside our checkpoints, named by no option), wandb its
files' directory (``WANDB_DIR``; otherwise ``./wandb`` wherever the command runs) and its
project (``WANDB_PROJECT``). ``tracker_environment`` sets them for the length of a run, so that
logs land in ``OUT/tensorboard/<run-name>`` and ``OUT/wandb``, and gives the old values back
after it (``iterate`` trains several times in one process). trackio takes its project and run
name from the training arguments and keeps every project in its own directory
(``$TRACKIO_DIR``, default ``$HF_HOME/trackio``), where ``trackio show`` finds them.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager

from agentcli.errors import UsageError
from agentcli.train.config import TrainConfig

# What to pip install for each --report-to backend.
TRACKER_PACKAGES = {"tensorboard": "tensorboard", "wandb": "wandb", "trackio": "trackio"}


def require_tracker(report_to: str) -> None:
    package = TRACKER_PACKAGES.get(report_to)
    if package is not None and importlib.util.find_spec(package) is None:
        raise UsageError(
            f"--report-to {report_to} needs the {package} package: run `pip install {package}`"
            " or pass --report-to none"
        )


def tracker_variables(config: TrainConfig) -> dict[str, str]:
    """The variables that place ``config``'s logs. A place the user set in the environment
    stays theirs; a ``--project`` given is the later choice, so it wins over theirs."""
    hyperparameters = config.hyperparameters
    run_name, tensorboard = hyperparameters.run_name, config.out / "tensorboard"
    places = {
        "tensorboard": {"TENSORBOARD_LOGGING_DIR": str(tensorboard / (run_name or ""))},
        "wandb": {"WANDB_DIR": str(config.out)},  # wandb adds its wandb/run-<time>-<id>
    }.get(hyperparameters.report_to, {})
    variables = {key: value for key, value in places.items() if key not in os.environ}
    if hyperparameters.report_to == "wandb" and hyperparameters.project is not None:
        variables["WANDB_PROJECT"] = hyperparameters.project
    return variables


@contextmanager
def tracker_environment(config: TrainConfig) -> Iterator[None]:
    """``tracker_variables`` set while the run is built and trains; the old values after."""
    variables = tracker_variables(config)
    before = {key: os.environ.get(key) for key in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
