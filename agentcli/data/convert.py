"""``agentgym data convert``: episodes between our JSONL and AgentGym's and LEAP's files.

The input format is detected; the readers and writers live in ``agentgym`` and ``leap``, and
what makes a conversion lossless in ``lossless``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentcli.common import write_atomic
from agentcli.data import jsonl
from agentcli.data.agentgym import agentgym_text, read_agentgym
from agentcli.data.leap import read_leap, write_leap
from agentcli.data.records import Episode
from agentcli.errors import UsageError

Format = Literal["agentgym", "leap", "episodes"]


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
        write_leap(episodes, path)
    else:
        jsonl.write_records(path, episodes)
