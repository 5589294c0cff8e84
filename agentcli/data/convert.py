"""Lossless conversion between Episodes and AgentGym's and LEAP's files.

Each foreign record is read into an Episode, and the Episode is rendered back the way the
format writes it. Whatever the source held that this rendering does not reproduce (an
assistant turn not in ``Thought: … Action: …`` form, a loss flag, a key order, a field the
Episode has no place for, an int written where we write a float) is kept in the Episode's
``meta`` as a *difference* from the rendering, together with the file's JSON layout when it
is not the format's usual one. Writing applies the difference, so a file read and written
back comes out byte for byte the same. A difference is:

- ``{"value": X}``: X replaces the rendered value;
- ``{"fields": {key: difference}, "keys": [...]}``: an object whose listed fields differ,
  and (when the keys differ in set or order) the source's keys in the source's order;
- ``{"items": {"3": difference}}``: a list of the same length whose listed items differ.

It describes the file an Episode came from: after editing the Episode's fields, drop
``meta["agentgym"]`` / ``meta["leap"]`` to get the plain rendering.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import re
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from agentcli.common import write_atomic
from agentcli.conversation import episode_conversation, parse_reply
from agentcli.data import jsonl
from agentcli.data.records import ChatRecord, Episode, Step, parse_item_id
from agentcli.errors import UsageError

logger = logging.getLogger(__name__)

Format = Literal["agentgym", "leap", "episodes"]

# The score that means success when a source records no success flag (AgentGym's own rule is
# reward == 1; sciworld scores 0-100).
_FULL_SCORE = {"sciworld": 100.0}

_SPEAKER = {"user": "human", "assistant": "gpt"}
SUMMARY = "summary.csv"
SUMMARY_COLUMNS = ("env_idx", "model_id", "num_actions", "score")
_INDEX = re.compile(r"0|[1-9][0-9]*")


@dataclass(frozen=True)
class JsonLayout:
    """How a JSON file is laid out, as arguments of ``json.dumps``."""

    indent: int | str | None
    ensure_ascii: bool
    final_newline: bool = False

    def dump(self, data: Any) -> str:
        text = json.dumps(data, indent=self.indent, ensure_ascii=self.ensure_ascii)
        return text + "\n" if self.final_newline else text


# What the formats' own tools write: AgentGym's data scripts `json.dump(..., indent=4,
# ensure_ascii=False)`; LEAP's loggers `json.dump(log, f, indent=4)`.
AGENTGYM_LAYOUT = JsonLayout(indent=4, ensure_ascii=False)
LEAP_LAYOUT = JsonLayout(indent=4, ensure_ascii=True)


@dataclass(frozen=True)
class Converted:
    source_format: Format
    count: int


def convert(source: Path, target: Path, to: Format, *, env: str | None = None) -> Converted:
    """Read ``source`` (format detected), write its episodes to ``target`` as ``to``.

    ``env`` names the environment of LEAP logs that do not record it (LEAP's own logs).
    """
    source_format = detect_format(source)
    if env is not None and source_format != "leap":
        raise UsageError(
            f"--env applies to LEAP log directories only, and {source} is {source_format}"
            " — drop --env"
        )
    episodes = read_episodes(source, source_format, env=env)
    write_episodes(episodes, target, to)
    return Converted(source_format, len(episodes))


def detect_format(path: Path) -> Format:
    if path.is_dir():
        return "leap"
    with path.open("rb") as file:  # a missing file raises FileNotFoundError: the CLI says so
        head = file.read(64).lstrip()
    if path.suffix.lower() == ".jsonl" or (head[:1] == b"{" and path.suffix.lower() != ".json"):
        return "episodes"
    if head[:1] == b"[":
        return "agentgym"
    raise UsageError(
        f"{path}: cannot tell its format — pass an AgentGym JSON list (.json), a JSONL file of"
        " episodes (.jsonl), or a LEAP-style directory (summary.csv and one log per episode)"
    )


def read_episodes(path: Path, source_format: Format, *, env: str | None = None) -> list[Episode]:
    if source_format == "agentgym":
        return read_agentgym(path)
    if source_format == "leap":
        return read_leap(path, env=env)
    return jsonl.read_records(path, Episode)


def write_episodes(episodes: Sequence[Episode], path: Path, to: Format) -> None:
    """Write atomically: a file through a temporary file, a LEAP directory as a whole."""
    if to == "agentgym":
        write_atomic(path, agentgym_text(episodes))
    elif to == "leap":
        _write_directory(path, leap_files(episodes))
    else:
        jsonl.write_records(path, episodes)


# --- AgentGym: a JSON list of {"item_id", "conversations": [{"from", "loss", "value"}]} ------


def read_agentgym(path: Path) -> list[Episode]:
    text, data = _read_json(path)
    if not isinstance(data, list):
        raise UsageError(f"{path}: an AgentGym file is a JSON list of records — check the file")
    layout = _detect_layout(text, data, AGENTGYM_LAYOUT, path)
    episodes = []
    for position, record in enumerate(data):
        episode = _episode_from_agentgym(record, f"{path} record {position}")
        kept = _keep(record, _agentgym_record(episode), "record", layout, AGENTGYM_LAYOUT)
        if kept:
            episode.meta["agentgym"] = kept
        episodes.append(episode)
    return episodes


def agentgym_text(episodes: Sequence[Episode]) -> str:
    records = [
        _restore(_agentgym_record(episode), episode.meta.get("agentgym", {}).get("record"))
        for episode in episodes
    ]
    return _layout_of(episodes, "agentgym", AGENTGYM_LAYOUT).dump(records)


def agentgym_training_text(records: Sequence[ChatRecord]) -> str:
    """Training conversations as an AgentGym JSON file (AgentTraj's shape: ``item_id`` and
    ``conversations``, human/gpt turns with their loss flags), for AgentGym's trainers."""
    return AGENTGYM_LAYOUT.dump(
        [
            {
                "item_id": record.item_id,
                "conversations": [
                    {"from": _SPEAKER[message.role], "loss": message.loss, "value": message.content}
                    for message in record.messages
                ],
            }
            for record in records
        ]
    )


def _agentgym_record(episode: Episode) -> dict[str, Any]:
    """The record AgentGym's evaluator writes for an episode."""
    blank = not episode.instruction and not episode.steps and episode.final_observation is None
    conversation = [
        {"from": _SPEAKER[message.role], "loss": message.loss, "value": message.content}
        for message in ([] if blank else episode_conversation(episode))
    ]  # an item with nothing played is written with no conversation, as in AgentGym's item lists
    return {
        "item_id": episode.item_id,
        "conversations": conversation,
        "reward": episode.reward,
        "success": int(episode.success),  # AgentGym writes 1 / 0
    }


def _episode_from_agentgym(record: Any, where: str) -> Episode:
    if not isinstance(record, dict) or not isinstance(record.get("item_id"), str):
        raise UsageError(f"{where}: expected an object with an 'item_id' — check the file")
    name = record["item_id"]
    try:
        env, _ = parse_item_id(name)
    except UsageError as error:
        raise UsageError(f"{where}: {error}") from None
    turns = record.get("conversations", [])
    if not isinstance(turns, list):
        raise UsageError(f"{where} ({name}): 'conversations' must be a list — check the file")
    for number, turn in enumerate(turns):
        speaker = "human" if number % 2 == 0 else "gpt"
        if not (
            isinstance(turn, dict)
            and turn.get("from") == speaker
            and isinstance(turn.get("value"), str)
        ):
            raise UsageError(
                f"{where} ({name}) turn {number}: expected a {speaker!r} turn with a text"
                " 'value' (conversations alternate human and gpt, starting with human)"
                " — fix the record"
            )
    values = [turn["value"] for turn in turns]
    # values: instruction, acknowledgement, then observation / reply pairs, then maybe the
    # observation that answered the last reply.
    steps = []
    for observation, reply in zip(values[2::2], values[3::2], strict=False):
        parsed = parse_reply(reply)
        steps.append(Step(observation=observation, reason=parsed.thought, action=parsed.action))
    final_observation = values[-1] if len(values) > 2 and len(values) % 2 == 1 else None
    reward = _number(record.get("reward"))
    success = record.get("success")
    success = reward >= _full_score(env) if success is None else bool(success)
    if steps:  # AgentGym's reward is the last step's; an episode that succeeded is done
        steps[-1].reward = reward
        steps[-1].done = success
    return _episode(
        where,
        item_id=name,
        env=env,
        instruction=values[0] if values else "",
        steps=steps,
        final_observation=final_observation,
        reward=reward,
        success=success,
    )


# --- LEAP: a directory of <env_idx>.json logs and summary.csv -------------------------------


def read_leap(directory: Path, *, env: str | None = None) -> list[Episode]:
    summary = directory / SUMMARY
    if not summary.is_file():
        raise UsageError(
            f"{directory}: no {SUMMARY} — a LEAP-style directory holds {SUMMARY}"
            f" ({','.join(SUMMARY_COLUMNS)}) and one <env_idx>.json log per row"
        )
    text = _read_text(summary)
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
        episode, kept = _episode_from_leap(row, directory / relative, where, env)
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
        files[relative] = layout.dump(_restore(_leap_log(episode), kept.get("log")))
        rows.append(_restore(_summary_row(episode), kept.get("summary")))
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
    row: dict[str, str], path: Path, where: str, env: str | None
) -> tuple[Episode, dict[str, Any]]:
    text, log = _read_json(path)  # a missing log raises FileNotFoundError: the CLI says so
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
        _build(
            Step,
            {
                "observation": step.get("observation"),
                "reason": step.get("reason", ""),
                "action": step.get("action"),
                "reward": _number(step.get("score")),
                "done": step.get("done", False),
                "candidate_actions": step.get("candidate_actions"),
            },
            f"{path} step {number}",
        )
        for number, step in enumerate(_objects(log["trajectory"], path))
    ]
    success = log.get("success", reward >= _full_score(env))
    if steps and "done" not in log["trajectory"][-1]:
        steps[-1].done = bool(success)  # LEAP stops on done; without the flag, trust success
    model = row.get("model_id") or ""
    episode = _episode(
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
    layout = _detect_layout(text, log, LEAP_LAYOUT, path)
    kept = _keep(log, _leap_log(episode), "log", layout, LEAP_LAYOUT)
    summary_difference = _difference(row, _summary_row(episode))
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


# --- keeping what the Episode fields do not reproduce -----------------------------------------


def _keep(
    source: Any, rendered: Any, name: str, layout: JsonLayout | None, usual: JsonLayout
) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    difference = _difference(source, rendered)
    if difference is not None:
        kept[name] = difference
    if layout is not None and layout != usual:
        kept["json"] = asdict(layout)
    return kept


def _difference(source: Any, rendered: Any) -> dict[str, Any] | None:
    """What turns ``rendered`` into ``source`` (see the module docstring); None if nothing."""
    if _same(source, rendered):
        return None
    if isinstance(source, dict) and isinstance(rendered, dict):
        fields = {}
        for key, value in source.items():
            inner = _difference(value, rendered[key]) if key in rendered else {"value": value}
            if inner is not None:
                fields[key] = inner
        difference: dict[str, Any] = {"fields": fields} if fields else {}
        if list(source) != list(rendered):
            difference["keys"] = list(source)
        return difference
    if isinstance(source, list) and isinstance(rendered, list) and len(source) == len(rendered):
        items = {}
        for position, (value, ours) in enumerate(zip(source, rendered, strict=True)):
            inner = _difference(value, ours)
            if inner is not None:
                items[str(position)] = inner
        return {"items": items}
    return {"value": source}


def _restore(rendered: Any, difference: dict[str, Any] | None) -> Any:
    if difference is None:
        return rendered
    if "value" in difference:
        return difference["value"]
    if "items" in difference:
        items = difference["items"]
        return [_restore(value, items.get(str(i))) for i, value in enumerate(rendered)]
    fields = difference.get("fields", {})
    return {
        key: _restore(rendered.get(key), fields.get(key))
        for key in difference.get("keys", rendered)
    }


def _same(first: Any, second: Any) -> bool:
    # Compared as JSON text: 1 and 1.0 and True differ, and so does key order.
    return json.dumps(first) == json.dumps(second)


def _detect_layout(text: str, data: Any, usual: JsonLayout, path: Path) -> JsonLayout | None:
    """The ``json.dumps`` arguments that reproduce ``text``; None (and a warning) if none do."""
    indents: list[int | str | None] = [usual.indent, None]
    nested = re.match(r"[\[{]\n([ \t]*)", text)
    if nested:
        spaces = nested[1]
        indents.insert(0, len(spaces) if spaces.strip(" ") == "" else spaces)
    for indent in dict.fromkeys(indents):
        for ensure_ascii in (usual.ensure_ascii, not usual.ensure_ascii):
            layout = JsonLayout(indent, ensure_ascii, text.endswith("\n"))
            if layout.dump(data) == text:
                return layout
    logger.warning(
        "%s: laid out in a way json.dumps does not produce; written back, it will be laid out"
        " as usual for the format (same content)",
        path,
    )
    return None


def _layout_of(episodes: Sequence[Episode], key: str, usual: JsonLayout) -> JsonLayout:
    for episode in episodes:
        if "json" in episode.meta.get(key, {}):
            return JsonLayout(**episode.meta[key]["json"])
    return usual


# --- small helpers ---------------------------------------------------------------------------

ModelT = TypeVar("ModelT", bound=BaseModel)


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text — check the file") from None


def _read_json(path: Path) -> tuple[str, Any]:
    text = _read_text(path)
    try:
        return text, json.loads(text)
    except ValueError as error:
        raise UsageError(f"{path}: not valid JSON ({error}) — fix the file") from None


def _build(model: type[ModelT], data: dict[str, Any], where: str) -> ModelT:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        field = ".".join(str(part) for part in first["loc"]) or "record"
        raise UsageError(f"{where}: {field}: {first['msg']} — fix the source file") from None


def _episode(where: str, **fields: Any) -> Episode:
    return _build(Episode, fields, where)


def _objects(values: list[Any], path: Path) -> list[dict[str, Any]]:
    for number, value in enumerate(values):
        if not isinstance(value, dict):
            raise UsageError(f"{path} step {number}: a trajectory step must be an object")
    return values


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _full_score(env: str) -> float:
    return _FULL_SCORE.get(env, 1.0)
