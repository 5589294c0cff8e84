"""LEAP's logs ⇄ Episodes: a directory of ``<env_idx>.json`` logs (or
``<model_id>/<env_idx>.json``, one folder per agent) and ``summary.csv``, read and written back
byte for byte (see ``lossless``)."""

from __future__ import annotations

import csv
import io
import logging
import os
import re
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentcli.data.foreign import (
    EnvLookup,
    as_score,
    build,
    build_episode,
    full_score,
    read_json,
    read_text,
)
from agentcli.data.lossless import JsonLayout, detect_layout, difference, keep, restore
from agentcli.errors import UsageError
from agentcli.records import Episode, Step

logger = logging.getLogger(__name__)

# What LEAP's loggers write: `json.dump(log, f, indent=4)`.
LEAP_LAYOUT = JsonLayout(indent=4, ensure_ascii=True)

SUMMARY = "summary.csv"
SUMMARY_COLUMNS = ("env_idx", "model_id", "num_actions", "score")
_INDEX = re.compile(r"0|[1-9][0-9]*")


def read_leap(
    directory: Path, *, env: str | None = None, env_facts: EnvLookup | None = None
) -> list[Episode]:
    """The episodes of a LEAP directory; ``env`` names the environment of logs that do not,
    ``env_facts`` says what score is a success where a log has no success flag."""
    summary = directory / SUMMARY
    if not summary.is_file():
        raise UsageError(
            f"{directory}: no {SUMMARY} — a LEAP-style directory holds {SUMMARY}"
            f" ({','.join(SUMMARY_COLUMNS)}) and one <env_idx>.json log per row"
        )
    text = read_text(summary)
    newline = "\r\n" if "\r\n" in text else "\n"
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    if rows and "env_idx" not in rows[0]:
        raise UsageError(f"{summary}: no env_idx column — the header must name env_idx")
    episodes = []
    used: set[Path] = set()
    for number, row in enumerate(rows, start=2):  # line 1 is the header
        where = f"{summary} line {number}"
        relative = _log_path(directory, row, where)
        used.add(relative)
        episode, kept = _episode_from_leap(row, directory / relative, where, env, env_facts)
        if relative != Path(f"{row['env_idx']}.json"):
            kept["path"] = relative.as_posix()
        if newline != "\n":
            kept["summary_newline"] = newline
        if kept:
            episode.meta["leap"] = kept
        episodes.append(episode)
    unlisted = sorted(
        str(path.relative_to(directory))
        for path in directory.rglob("*.json")
        if path.relative_to(directory) not in used
    )
    if unlisted:
        logger.warning(
            "%s: %d JSON file(s) not listed in %s were left out: %s",
            directory,
            len(unlisted),
            SUMMARY,
            ", ".join(unlisted[:5]) + (", …" if len(unlisted) > 5 else ""),
        )
    return episodes


def leap_files(episodes: Sequence[Episode]) -> dict[Path, str]:
    """The files of a LEAP-style directory: relative path → text."""
    files: dict[Path, str] = {}
    rows = []
    newline = "\n"
    for episode in episodes:
        kept = episode.meta.get("leap", {})
        relative = Path(kept.get("path", f"{episode.index}.json"))
        if relative.is_absolute() or ".." in relative.parts:
            raise UsageError(f"{episode.item_id}: meta.leap.path {relative} leaves the directory")
        if relative in files:
            raise UsageError(
                f"{episode.item_id}: a second episode for log {relative} — a LEAP directory"
                " holds one log per env_idx (per model_id); remove the duplicate"
            )
        layout = JsonLayout(**kept["json"]) if "json" in kept else LEAP_LAYOUT
        files[relative] = layout.dump(restore(_leap_log(episode), kept.get("log")))
        rows.append(restore(_summary_row(episode), kept.get("summary")))
        newline = kept.get("summary_newline", newline)
    text = io.StringIO(newline="")
    columns = list(rows[0]) if rows else list(SUMMARY_COLUMNS)
    writer = csv.DictWriter(text, columns, restval="", lineterminator=newline)
    writer.writeheader()
    writer.writerows(rows)
    files[Path(SUMMARY)] = text.getvalue()
    return files


def _log_path(directory: Path, row: dict[str, str], where: str) -> Path:
    """LEAP writes ``<model_id>/<env_idx>.json`` (one folder per agent); ours are flat."""
    index = row.get("env_idx") or ""
    if not _INDEX.fullmatch(index):
        raise UsageError(f"{where}: env_idx {index!r} is not a whole number — fix the row")
    model = row.get("model_id") or ""
    nested = Path(model, f"{index}.json")
    if model and ".." not in nested.parts and (directory / nested).is_file():
        return nested
    return Path(f"{index}.json")


def _episode_from_leap(
    row: dict[str, str], path: Path, where: str, env: str | None, env_facts: EnvLookup | None
) -> tuple[Episode, dict[str, Any]]:
    text, log = read_json(path)  # a missing log raises FileNotFoundError: the CLI says so
    if not isinstance(log, dict) or not isinstance(log.get("trajectory"), list):
        raise UsageError(f"{path}: a LEAP log is an object with a 'trajectory' list")
    env = log.get("env", env)
    if not isinstance(env, str):
        raise UsageError(f"{path}: the log does not name its environment — pass --env NAME")
    try:
        reward = float(row.get("score") or 0)
    except ValueError:
        raise UsageError(f"{where}: score {row['score']!r} is not a number") from None
    steps = [
        build(
            Step,
            {
                "observation": step.get("observation"),
                "reason": step.get("reason", ""),
                "action": step.get("action"),
                "reward": as_score(step.get("score")),
                "done": step.get("done", False),
                "candidate_actions": step.get("candidate_actions"),
            },
            f"{path} step {number}",
        )
        for number, step in enumerate(_objects(log["trajectory"], path))
    ]
    success = log.get("success", reward >= full_score(env, env_facts))
    if steps and "done" not in log["trajectory"][-1]:
        steps[-1].done = bool(success)  # LEAP stops on done; without the flag, trust success
    model = row.get("model_id") or ""
    episode = build_episode(
        str(path),
        item_id=f"{env}_{row['env_idx']}",
        env=env,
        split=log.get("split"),
        instruction=log.get("instruction", ""),
        steps=steps,
        final_observation=log.get("final_observation"),
        reward=reward,
        success=success,
        meta=log.get("meta", {"model": model} if model else {}),
    )
    layout = detect_layout(text, log, LEAP_LAYOUT, path)
    kept = keep(log, _leap_log(episode), "log", layout, LEAP_LAYOUT)
    summary_difference = difference(row, _summary_row(episode))
    if summary_difference is not None:
        kept["summary"] = summary_difference
    return episode, kept


def _leap_log(episode: Episode) -> dict[str, Any]:
    """LEAP's log fields (env_idx, trajectory of observation / candidate_actions / reason /
    action / score), plus what makes the log a whole Episode."""
    return {
        "env_idx": episode.index,
        "env": episode.env,
        "split": episode.split,
        "instruction": episode.instruction,
        "trajectory": [
            {
                "observation": step.observation,
                "candidate_actions": step.candidate_actions,
                "reason": step.reason,
                "action": step.action,
                "score": step.reward,
                "done": step.done,
            }
            for step in episode.steps
        ],
        "final_observation": episode.final_observation,
        "success": episode.success,
        "meta": {key: value for key, value in episode.meta.items() if key != "leap"},
    }


def _summary_row(episode: Episode) -> dict[str, str]:
    model = episode.meta.get("model") or episode.meta.get("policy") or ""
    return {
        "env_idx": str(episode.index),
        "model_id": str(model),
        "num_actions": str(episode.n_steps),
        "score": repr(episode.reward),
    }


def write_leap(episodes: Sequence[Episode], path: Path) -> None:
    """Write a LEAP-style directory as a whole (see ``_write_directory``)."""
    _write_directory(path, leap_files(episodes))


def _write_directory(path: Path, files: dict[Path, str]) -> None:
    """Build the directory beside ``path`` and rename it into place in one step."""
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise UsageError(f"{path} already exists — choose a new output directory or remove it")
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    staging.mkdir()  # permissions as for any new directory (umask applies)
    try:
        for relative, text in files.items():
            (staging / relative).parent.mkdir(parents=True, exist_ok=True)
            (staging / relative).write_bytes(text.encode("utf-8"))
        if path.exists():
            path.rmdir()  # empty, checked above
        os.replace(staging, path)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _objects(values: list[Any], path: Path) -> list[dict[str, Any]]:
    for number, value in enumerate(values):
        if not isinstance(value, dict):
            raise UsageError(f"{path} step {number}: a trajectory step must be an object")
    return values
