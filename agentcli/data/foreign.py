"""Reading AgentGym's and LEAP's files into our records: what both readers share.

A foreign file is read as text (the layout is detected from it) and every fault becomes one
line that names the file, the record and what to fix.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from agentcli.errors import UsageError
from agentcli.records import Episode

ModelT = TypeVar("ModelT", bound=BaseModel)


class EnvFacts(Protocol):
    """What reading a foreign file needs to know of an environment. An env's spec answers it;
    data/ imports no env, so the caller hands in a lookup (``EnvLookup``)."""

    @property
    def full_score(self) -> float:
        """The score that means success where a record carries no success flag."""
        ...

    @property
    def index_of_task(self) -> Callable[[str], int | None] | None:
        """A task's first observation -> our index of the item it states, or None."""
        ...


EnvLookup = Callable[[str], EnvFacts | None]  # env name -> its facts; None: not known here


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


def full_score(env: str, env_facts: EnvLookup | None) -> float:
    """The score that means success for ``env``: AgentGym's rule (reward == 1) unless its facts
    say otherwise (sciworld scores 0-100)."""
    facts = env_facts(env) if env_facts is not None else None
    return facts.full_score if facts is not None else 1.0
