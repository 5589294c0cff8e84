"""Reading AgentGym's and LEAP's files into our records: what both readers share.

A foreign file is read as text (the layout is detected from it) and every fault becomes one
line that names the file, the record and what to fix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from agentcli.data.records import Episode
from agentcli.errors import UsageError

ModelT = TypeVar("ModelT", bound=BaseModel)

# The score that means success when a source records no success flag (AgentGym's own rule is
# reward == 1; sciworld scores 0-100).
_FULL_SCORE = {"sciworld": 100.0}


def read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text — check the file") from None


def read_json(path: Path) -> tuple[str, Any]:
    """The file's text (to detect its layout) and its parsed JSON."""
    text = read_text(path)
    try:
        return text, json.loads(text)
    except ValueError as error:
        raise UsageError(f"{path}: not valid JSON ({error}) — fix the file") from None


def build(model: type[ModelT], data: dict[str, Any], where: str) -> ModelT:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        field = ".".join(str(part) for part in first["loc"]) or "record"
        raise UsageError(f"{where}: {field}: {first['msg']} — fix the source file") from None


def build_episode(where: str, **fields: Any) -> Episode:
    return build(Episode, fields, where)


def as_score(value: Any) -> float:
    """A score as the formats write it; anything that is not a number counts as 0."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def full_score(env: str) -> float:
    return _FULL_SCORE.get(env, 1.0)
