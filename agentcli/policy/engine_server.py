"""An inference engine that a stage launches on its own model: vLLM or SGLang serving the
OpenAI API, one process group per replica, for as long as the stage runs.

A policy or teacher of kind ``vllm`` / ``sglang`` names the model; the stage that needs it
starts, once per replica, the engine's own command line::

    vllm serve MODEL --host 127.0.0.1 --port P --served-model-name NAME [args]
    python -m sglang.launch_server --model-path MODEL --host 127.0.0.1 --port P \
        --served-model-name NAME [args]

each replica on its GPU set (``CUDA_VISIBLE_DEVICES``) with its output in a log file of the
stage's output directory; it waits until every replica answers ``GET /v1/models``, hands the
stage their URLs (the OpenAI endpoint client does the talking), and stops them when the stage
ends, however it ends (done, an error, Ctrl-C): SIGTERM to each replica's process group (the
engine and every worker it forked), SIGKILL to whatever of the group is left after
``STOP_TIMEOUT_S``. An engine also gets SIGTERM when the command that started it dies
without a chance to stop it (kill -9). An engine that exits before it is ready, or is not
ready in time, is one line ending with the last lines of its log.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from agentcli.common import die_with_parent, free_port, wait_until_answering
from agentcli.config import CommandConfig
from agentcli.endpoints import ModelEndpoints
from agentcli.errors import EngineServerError, UsageError

log = logging.getLogger("agentgym.engine")

EngineKind = Literal["vllm", "sglang"]  # policies and teachers of these kinds launch one
HOST = "127.0.0.1"  # the stage talks to its engine on this machine only
POLL_S = 0.1  # how often stopping checks whether a replica has exited
STOP_TIMEOUT_S = 60.0  # vLLM frees its GPU memory and workers in seconds; a minute is ample
TAIL_LINES = 5


@dataclass(frozen=True)
class Engine:
    command: tuple[str, ...]  # what runs before the arguments, as the engine documents it
    model_option: str | None  # None: the model is the first positional argument

    def arguments(self, model: str, port: int, served_name: str) -> list[str]:
        where = [self.model_option, model] if self.model_option else [model]
        return [*where, "--host", HOST, "--port", str(port), "--served-model-name", served_name]


ENGINES: dict[EngineKind, Engine] = {
    "vllm": Engine(command=("vllm", "serve"), model_option=None),
    "sglang": Engine(command=("python", "-m", "sglang.launch_server"), model_option="--model-path"),
}


class EngineSettings(CommandConfig):
    """How a ``vllm`` or ``sglang`` policy or teacher launches its engine (kinds that launch
    none refuse these settings)."""

    command: list[str] | None = Field(
        None,
        description="vllm/sglang: the engine's command, before the model and the port; default:"
        " [vllm, serve] or [python, -m, sglang.launch_server].",
    )
    args: list[str] = Field(
        default_factory=list,
        description="vllm/sglang: more engine arguments, e.g. [--max-model-len, '8192'].",
    )
    gpus: list[str] = Field(
        default_factory=list,
        description="vllm/sglang: one replica per GPU set, its CUDA_VISIBLE_DEVICES, e.g."
        " ['0,1', '2,3']; none: one replica on the GPUs this process sees.",
    )
    port: int | None = Field(
        None,
        ge=1,
        le=65535,
        description="vllm/sglang: replica i listens on port + i; default: free ports.",
    )
    ready_timeout_s: float = Field(
        1200.0, gt=0, description="vllm/sglang: seconds to wait for each replica to be ready."
    )

    @field_validator("args", "gpus", mode="before")
    @classmethod
    def _numbers_as_text(cls, value: Any) -> Any:
        """``args: [--tensor-parallel-size, 2]`` and ``gpus: [0, 1]`` (two replicas of one GPU
        each) read as they are meant: YAML makes numbers of them."""
        if isinstance(value, list):
            return [
                str(entry)
                if isinstance(entry, int | float) and not isinstance(entry, bool)
                else entry
                for entry in value
            ]
        return value

    def check_engine(self, kind: str) -> None:
        """For an engine kind, fill in its command; for any other kind, refuse engine settings
        (a setting that would do nothing is an error, not a silence)."""
        if kind in ENGINES:
            if self.command is None:
                self.command = list(ENGINES[kind].command)
            if not self.command:
                raise ValueError("command is empty: name the engine's executable")
            return
        defaults = EngineSettings()
        given = [
            name
            for name in EngineSettings.model_fields
            if getattr(self, name) != getattr(defaults, name)
        ]
        if given:
            raise ValueError(
                f"{', '.join(given)}: for kind vllm or sglang, which launch an engine; this"
                f" one is {kind}"
            )


@dataclass
class _Replica:
    process: subprocess.Popen
    url: str  # the server's root; the OpenAI API is under /v1
    log_path: Path
    log_start: int  # where this launch's output begins in the log

    def tail(self) -> str:
        """The last lines this launch wrote, on one line."""
        with self.log_path.open("rb") as file:
            file.seek(self.log_start)
            lines = file.read().decode("utf-8", "replace").splitlines()
        last = [" ".join(line.split()) for line in lines if line.strip()][-TAIL_LINES:]
        return " | ".join(last) or "(empty)"


@contextmanager
def serve_engine(
    kind: EngineKind,
    settings: EngineSettings,
    model: str,
    *,
    log_file: Callable[[str], Path],
    setting: str,
) -> Iterator[ModelEndpoints]:
    """``settings``' engine serving ``model`` (a directory or a hub id) under the name
    ``model``, one replica per GPU set, until the block ends; yields their endpoints.
    ``log_file(name)`` is where the replica's log goes (``vllm.log``, ``vllm-1.log``, ...);
    ``setting`` is the config section, for the messages (``policy``, ``teacher``)."""
    engine = ENGINES[kind]
    command = settings.command or list(engine.command)
    if shutil.which(command[0]) is None:
        raise UsageError(
            f"{setting}.command: {command[0]!r} is not installed here (not on PATH): install"
            f" {kind} (on a machine with a GPU), or set {setting}.command to its executable"
        )
    gpu_sets: Sequence[str | None] = settings.gpus or [None]
    replicas: list[_Replica] = []
    try:
        for number, gpus in enumerate(gpu_sets):
            port = settings.port + number if settings.port is not None else free_port()
            name = f"{kind}.log" if len(gpu_sets) == 1 else f"{kind}-{number}.log"
            arguments = [*command, *engine.arguments(model, port, model), *settings.args]
            replicas.append(_start(arguments, gpus, port, log_file(name)))
        deadline = time.monotonic() + settings.ready_timeout_s
        for replica in replicas:
            _wait_ready(replica, kind, model, deadline, settings.ready_timeout_s)
        log.info("%s serves %s on %s", kind, model, ", ".join(r.url for r in replicas))
        yield ModelEndpoints(tuple(f"{replica.url}/v1" for replica in replicas), model)
    finally:
        _stop(replicas, kind)


def _start(arguments: list[str], gpus: str | None, port: int, log_path: Path) -> _Replica:
    environ = dict(os.environ)
    if gpus is not None:
        environ["CUDA_VISIBLE_DEVICES"] = gpus
    shown = ("" if gpus is None else f"CUDA_VISIBLE_DEVICES={gpus} ") + shlex.join(arguments)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("a", encoding="utf-8") as out:  # a rerun's launch adds to the log
        start = out.tell()
        out.write(f"--- agentgym starts: {shown}\n")
        out.flush()
        log.info("starting %s (log: %s)", shown, log_path)
        process = subprocess.Popen(
            arguments,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=environ,
            start_new_session=True,  # its own process group: Ctrl-C is ours to pass on, and
            preexec_fn=die_with_parent,  # the group is what we stop
        )
    return _Replica(process, f"http://{HOST}:{port}", log_path, start)


def _wait_ready(
    replica: _Replica, kind: str, model: str, deadline: float, timeout_s: float
) -> None:
    state = wait_until_answering(f"{replica.url}/v1/models", replica.process, deadline)
    if state == "exited":
        raise EngineServerError(
            f"{kind} serving {model} exited with code {replica.process.returncode} before it"
            f" was ready; the end of {replica.log_path}: {replica.tail()}"
        )
    if state == "timed out":
        raise EngineServerError(
            f"{kind} serving {model} was not ready after {timeout_s:g} s (raise"
            f" ready_timeout_s if it is still loading); the end of {replica.log_path}:"
            f" {replica.tail()}"
        )


def _stop(replicas: Sequence[_Replica], kind: str) -> None:
    """SIGTERM every replica's group, wait for the engines, then SIGKILL what is left of each
    group. A leader is reaped only after its group is killed: until then its pid (which is the
    group's id) cannot be reused, so the kill cannot reach a stranger."""
    for replica in replicas:
        _signal_group(replica.process.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for replica in replicas:
        while not _exited(replica.process.pid) and time.monotonic() < deadline:
            time.sleep(POLL_S)
        _signal_group(replica.process.pid, signal.SIGKILL)
        replica.process.wait()
        log.info("%s on %s stopped", kind, replica.url)


def _exited(pid: int) -> bool:
    """Whether the process has exited, without reaping it."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # already reaped
        return True


def _signal_group(group: int, number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # every process of the group is gone
        os.killpg(group, number)
