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
from agentcli.data.foreign import EnvLookup
from agentcli.data.leap import read_leap, write_leap
from agentcli.errors import UsageError
from agentcli.records import Episode

Format = Literal["agentgym", "leap", "episodes"]


@dataclass(frozen=True)
class Converted:
    source_format: Format
    count: int


# What each format is written as: a file with this suffix, or (None) a directory.
TARGET_SUFFIX: dict[Format, str | None] = {"agentgym": ".json", "episodes": ".jsonl", "leap": None}


def convert(
    source: Path,
    target: Path,
    to: Format,
    *,
    env: str | None = None,
    overwrite: bool = False,
    env_facts: EnvLookup | None = None,
) -> Converted:
    """Read ``source`` (format detected), write its episodes to ``target`` as ``to``.

    ``env`` names the environment of LEAP logs that do not record it (LEAP's own logs). A
    target that exists is replaced only with ``overwrite`` (a LEAP directory never is).
    ``env_facts`` (the envs' specs, handed in) gives AgentGym's textcraft records our id of
    their goal (``read_agentgym``) and says which score is a success where none is recorded.
    """
    check_target(source, target, to, overwrite=overwrite)
    source_format = detect_format(source)
    if env is not None and source_format != "leap":
        raise UsageError(
            f"--env applies to LEAP log directories only, and {source} is {source_format}"
            " — drop --env"
        )
    episodes = read_episodes(source, source_format, env=env, env_facts=env_facts)
    write_episodes(episodes, target, to)
    return Converted(source_format, len(episodes))


def check_target(source: Path, target: Path, to: Format, *, overwrite: bool) -> None:
    """Refuse a target that does not fit ``to`` or would replace a file unasked (two swapped
    arguments would otherwise overwrite the source)."""
    suffix = TARGET_SUFFIX[to]
    if suffix is not None and target.suffix.lower() != suffix:
        raise UsageError(f"--to {to} writes a {suffix} file, not {target.name}: name it *{suffix}")
    if suffix is None and target.suffix:
        raise UsageError(f"--to leap writes a directory, not {target.name}: name it without .ext")
    if target.exists() and target.resolve() == source.resolve():
        raise UsageError(f"{target} is the source too: name another target")
    if target.is_file() and not overwrite:
        raise UsageError(f"{target} exists: pass --overwrite to replace it, or name another target")


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


def read_episodes(
    path: Path,
    source_format: Format,
    *,
    env: str | None = None,
    env_facts: EnvLookup | None = None,
) -> list[Episode]:
    if source_format == "agentgym":
        return read_agentgym(path, env_facts)
    if source_format == "leap":
        return read_leap(path, env=env, env_facts=env_facts)
    return jsonl.read_records(path, Episode)


def write_episodes(episodes: Sequence[Episode], path: Path, to: Format) -> None:
    """Write atomically: a file through a temporary file, a LEAP directory as a whole."""
    if to == "agentgym":
        write_atomic(path, agentgym_text(episodes))
    elif to == "leap":
        write_leap(episodes, path)
    else:
        jsonl.write_records(path, episodes)
