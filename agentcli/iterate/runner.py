"""A stage graph over a run directory, with ``manifest.json`` saying what each stage did.

``agentcli.iterate.stages`` builds an iteration's stages; ``run_stages`` runs them in order.
For each stage the manifest records its status (pending, running, done, failed), its config
and the config's hash, fingerprints of its inputs and outputs, a one-line summary, timings and
the machine's load as it ended; the manifest also records the run's seed.
The manifest is rewritten atomically before a stage starts and after it ends, so a killed run
leaves one that says which stage was running.

A rerun decides stage by stage:

- done, same config, same inputs, outputs still there: skipped;
- done, inputs changed (an earlier stage was redone) or outputs gone: redone;
- done, config changed: an error naming the stage and the keys, unless ``force`` says to
  redo it. Settings that change how a stage runs but not what it makes (``OPERATIONAL``:
  server URLs, concurrency, retries, the budget, where training logs go) do not count as changes;
- running or failed (interrupted): run again, which resumes it, since every stage picks up
  its own outputs (records keyed by item id, training checkpoints); redone instead when its
  inputs changed meanwhile; config changed: an error as for a done stage (resuming would mix
  records of both configs), unless ``force`` says to start it over;
- never run: run.

``from_stage`` redoes the named stage. A redone stage redoes every later stage of its
iteration too. Redoing first removes the stage's outputs, so a resumable stage starts over
instead of resuming from stale records.

Fingerprints: a file by the sha256 of its bytes; a directory (a model: up to gigabytes) by
the relative path, size and modification time of every file in it, which is cheap and
changes whenever anything in it is rewritten.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from agentcli.common import write_atomic
from agentcli.errors import UsageError
from agentcli.resume import differing_keys, fingerprints

log = logging.getLogger("agentgym.iterate")

PENDING, RUNNING, DONE, FAILED = "pending", "running", "done", "failed"
INTERRUPTED = "interrupted"  # stopped by Ctrl-C (or SIGTERM): rerun to resume
MANIFEST_VERSION = 1
# Keys (the last part of a dotted path) that change how a stage runs, not what it makes: the
# servers, how many requests, where a launched engine runs (its command, GPUs, ports), and
# the tracker's (train's report_to, run_name, project), which say only where the logs go.
OPERATIONAL = frozenset(
    {"env_server", "concurrency", "max_cost", "timeout_s", "max_retries"}
    | {"command", "gpus", "port", "ready_timeout_s"}
    | {"report_to", "run_name", "project"}
)

Action = Literal["skip", "run", "redo"]


@dataclass
class Stage:
    """One step of an iteration: ``run`` does the work (resuming from its outputs) and returns
    a one-line summary."""

    name: str  # what --from-stage names: collect, annotate, build-data, train, eval, ...
    iteration: int
    config: dict[str, Any]  # JSON-able, secrets hidden (config_as_data)
    inputs: Sequence[Path]
    outputs: Sequence[Path]  # removed before a redo
    run: Callable[[], str]
    env: str | None = None
    ledger: Path | None = None  # a teacher stage's cost ledger, for the report

    @property
    def key(self) -> str:
        return "/".join([f"iter{self.iteration}", self.name, *([self.env] if self.env else [])])


@dataclass(frozen=True)
class Outcome:
    key: str
    stage: str
    action: Action
    reason: str
    summary: str


class Manifest:
    """``manifest.json``: stage key → what the stage did."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seed: int | None = None  # the run's seed, which seeded every stage
        self.stages: dict[str, dict[str, Any]] = {}
        self.iterations: dict[str, dict[str, Any]] = {}
        if path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                self.stages, self.iterations = data["stages"], data["iterations"]
                self.seed = data.get("seed")
            except (ValueError, KeyError, TypeError):
                raise UsageError(
                    f"{path} is not an agentgym manifest: move it away or choose another run"
                ) from None

    def save(self) -> None:
        data = {
            "version": MANIFEST_VERSION,
            "seed": self.seed,
            "iterations": self.iterations,
            "stages": self.stages,
        }
        write_atomic(self.path, json.dumps(data, indent=2) + "\n")


def config_hash(config: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()


def changed_keys(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Dotted keys whose values differ (``differing_keys``), leaving out the ``OPERATIONAL``
    ones."""
    return [key for key in differing_keys(old, new) if key.split(".")[-1] not in OPERATIONAL]


def decide(
    stage: Stage, entry: Mapping[str, Any] | None, *, requested: bool, force: bool
) -> tuple[Action, str]:
    """What to do with ``stage`` given its manifest ``entry``, and why (for the log)."""
    if requested:
        return "redo", "redo requested"
    if entry is None or entry["status"] == PENDING:
        return "run", "not run yet"
    inputs_changed = entry["inputs"] != fingerprints(stage.inputs)
    if entry["status"] != DONE and inputs_changed:
        return "redo", f"was {entry['status']}, and its inputs changed since"
    changed = changed_keys(entry["config"], stage.config)
    if changed:
        if not force:
            raise _changed_config(stage, entry["status"], changed)
        return "redo", f"config changed ({', '.join(changed)})"
    if entry["status"] != DONE:
        return "run", f"resuming (was {entry['status']})"
    if inputs_changed:
        return "redo", "its inputs changed"
    gone = [path for path, made in entry["outputs"].items() if made and not Path(path).exists()]
    if gone:
        return "redo", f"{gone[0]} is gone"
    return "skip", "done"


def check_plan(
    stages: Sequence[Stage], manifest: Manifest, *, from_stage: str | None, force: bool
) -> None:
    """Refuse, before anything runs, an unknown ``from_stage`` or a finished stage whose config
    changed (unless ``force``, or ``from_stage`` redoes it anyway)."""
    if from_stage is not None and from_stage not in {stage.name for stage in stages}:
        names = ", ".join(dict.fromkeys(stage.name for stage in stages))
        raise UsageError(f"--from-stage {from_stage}: no such stage here; the stages: {names}")
    if force:
        return
    requested_from = next(
        (position for position, stage in enumerate(stages) if stage.name == from_stage),
        len(stages),
    )
    for stage in stages[:requested_from]:
        entry = manifest.stages.get(stage.key)
        if entry is not None and entry["status"] != PENDING:
            changed = changed_keys(entry["config"], stage.config)
            if changed:
                raise _changed_config(stage, entry["status"], changed)


def run_stages(
    stages: Sequence[Stage],
    manifest: Manifest,
    *,
    from_stage: str | None = None,
    force: bool = False,
) -> list[Outcome]:
    """Run (or skip, resume, redo) each stage in order, recording it in ``manifest``."""
    check_plan(stages, manifest, from_stage=from_stage, force=force)
    for stage in stages:  # the manifest lists the whole plan from the start
        if stage.key not in manifest.stages:
            manifest.stages[stage.key] = _entry(stage, PENDING, inputs={}, attempts=0, seconds=0.0)
    manifest.save()
    redo_rest: set[int] = set()  # iterations where a stage was redone
    outcomes = []
    for number, stage in enumerate(stages, start=1):
        entry = manifest.stages.get(stage.key)
        requested = stage.name == from_stage or stage.iteration in redo_rest
        action, reason = decide(stage, entry, requested=requested, force=force)
        if action == "redo":
            redo_rest.add(stage.iteration)
        where = f"stage {number}/{len(stages)} {stage.key}"
        if action == "skip":
            log.info("%s: skipped (%s)", where, reason)
            outcomes.append(Outcome(stage.key, stage.name, action, reason, entry["summary"]))
            continue
        log.info("%s: %s", where, reason)
        summary = _run(stage, manifest, entry, redo=action == "redo")
        log.info("%s: %s", where, summary)
        outcomes.append(Outcome(stage.key, stage.name, action, reason, summary))
    return outcomes


def _run(
    stage: Stage, manifest: Manifest, previous: Mapping[str, Any] | None, *, redo: bool
) -> str:
    if redo:
        for path in stage.outputs:
            _remove(path)
    # a resumed stage's attempts and seconds add up; a redone one starts again
    fresh = redo or previous is None
    entry = _entry(
        stage,
        RUNNING,
        inputs=fingerprints(stage.inputs),
        attempts=1 if fresh else previous["attempts"] + 1,
        seconds=0.0 if fresh else previous["seconds"],
    )
    manifest.stages[stage.key] = entry
    manifest.save()
    started = time.perf_counter()
    try:
        summary = stage.run()
    except BaseException as exc:  # Ctrl-C too: the manifest says the stage did not finish
        entry.update(
            status=INTERRUPTED if isinstance(exc, KeyboardInterrupt) else FAILED,
            error=str(exc) or type(exc).__name__,
            seconds=round(entry["seconds"] + time.perf_counter() - started, 3),
        )
        manifest.save()
        raise
    entry.update(
        status=DONE,
        summary=summary,
        outputs=fingerprints(stage.outputs),
        seconds=round(entry["seconds"] + time.perf_counter() - started, 3),
        finished_at=_now(),
        load=round(os.getloadavg()[1], 2),  # the machine's 5-minute load as the stage ended
    )
    entry.pop("error", None)
    manifest.save()
    return summary


def _changed_config(stage: Stage, status: str, changed: list[str]) -> UsageError:
    return UsageError(
        f"{stage.key} is {status}, but its config changed ({', '.join(changed)}): pass --force"
        f" to redo it and what follows, --from-stage {stage.name}, or undo the change"
    )


def _entry(
    stage: Stage, status: str, *, inputs: dict[str, Any], attempts: int, seconds: float
) -> dict[str, Any]:
    return {
        "status": status,
        "iteration": stage.iteration,
        "stage": stage.name,
        "env": stage.env,
        "ledger": str(stage.ledger) if stage.ledger else None,
        "config_hash": config_hash(stage.config),
        "config": stage.config,
        "inputs": inputs,
        "outputs": {},
        "summary": "",
        "attempts": attempts,
        "seconds": seconds,
        "started_at": _now() if status == RUNNING else None,
        "finished_at": None,
    }


@contextmanager
def run_lock(path: Path) -> Iterator[None]:
    """Hold ``path`` locked while working on a run; the lock dies with the process."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as file:
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(
                f"another agentgym iterate is working on {path.parent}: wait for it to end"
            ) from None
        yield


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
