"""Resuming an output only when it holds records of the same settings.

A resumable stage appends records to its output and, rerun, skips the items already there.
That is only right when the records were made with the settings that shape them (the model and
its weights, the policy, the env and split, the turns allowed, what the student is shown...);
operational settings (concurrency, servers, retries) may change. ``guard_output`` keeps those
settings beside the records (``<name>.settings.json``) and refuses a rerun whose settings
differ, naming what changed and the two ways out. ``fingerprint`` identifies an input file (or
directory) for those settings: records made from other inputs are records of other settings.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentcli.common import write_atomic
from agentcli.errors import UsageError

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt")
_DIGEST = re.compile(r"[0-9a-f]{40,}")
_SAMPLED = 1 << 20  # bytes hashed at each end of a weight file: enough to tell two apart


def settings_path(records: Path) -> Path:
    """Where the settings of ``records`` are kept."""
    return records.with_name(f"{records.stem}.settings.json")


def guard_output(records: Path, settings: Mapping[str, Any], *, overwrite: bool) -> None:
    """Make ``records`` ready to be appended to with ``settings``: refuse when it holds records
    of other (or unknown) settings, unless ``overwrite``, which removes them first."""
    kept = settings_path(records)
    if overwrite:
        records.unlink(missing_ok=True)
        kept.unlink(missing_ok=True)
    else:
        refuse_other_settings(records, settings)
    write_atomic(kept, json.dumps(settings, indent=2, sort_keys=True, default=str) + "\n")


def settings_digest(settings: Mapping[str, Any]) -> str:
    """A sha256 of ``settings`` (key order aside): equal exactly when the settings are."""
    canonical = json.dumps(settings, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def refuse_other_settings(records: Path, settings: Mapping[str, Any]) -> None:
    """Raise ``UsageError`` when ``records`` holds records of settings other than ``settings``
    (or of settings not kept beside it); an empty or missing ``records`` holds none."""
    if not records.exists() or records.stat().st_size == 0:
        return
    kept = settings_path(records)
    if not kept.is_file():
        raise UsageError(
            f"{records} holds records whose settings are unknown (written by hand or by an"
            " older agentgym): pass --out elsewhere, or --overwrite to replace them"
        )
    changes = changed_settings(json.loads(kept.read_text(encoding="utf-8")), settings)
    if changes:
        raise UsageError(
            f"{records} holds records made with other settings ({'; '.join(changes)}):"
            " pass --out elsewhere to keep both, or --overwrite to replace them"
        )


def changed_settings(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """``key: old → new`` for each dotted key whose value differs (``differing_keys``)."""
    flat_old, flat_new = flatten(old), flatten(new)
    return [
        f"{key}: {_shown(flat_old.get(key))} → {_shown(flat_new.get(key))}"
        for key in differing_keys(old, new)
    ]


def differing_keys(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The dotted keys whose values differ, sorted. A key only one side has counts only when
    its value there is not empty (None, "", [] or {}): a setting agentgym added since the
    records were made, left at its empty default, cannot have shaped them, and a run made by
    the previous version must stay resumable."""
    flat_old, flat_new = flatten(old), flatten(new)
    return sorted(
        key
        for key in flat_old.keys() | flat_new.keys()
        if flat_old.get(key, _ABSENT) != flat_new.get(key, _ABSENT)
        and not _added_empty(flat_old.get(key, _ABSENT), flat_new.get(key, _ABSENT))
    )


_ABSENT = object()


def _added_empty(old: Any, new: Any) -> bool:
    one_side = new if old is _ABSENT else old if new is _ABSENT else _ABSENT
    return one_side is not _ABSENT and one_side in (None, "", [], {})


def _shown(value: Any) -> str:
    """A value for the message; a digest by its first 12 characters, enough to tell two apart."""
    if isinstance(value, str) and _DIGEST.fullmatch(value):
        return repr(value[:12] + "…")
    return repr(value)


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` → ``{"a.b": 1}``; an empty mapping below the top stays a value."""
    if isinstance(value, Mapping) and (value or not prefix):
        flat: dict[str, Any] = {}
        for key, inner in value.items():
            flat |= flatten(inner, f"{prefix}{key}.")
        return flat
    return {prefix[:-1]: value}


def weights_identity(model_dir: Path) -> str | None:
    """A digest that changes when a model directory's weights do: each weight file's name,
    size and its first and last MiB (a whole-file hash of gigabytes would cost minutes);
    None when there is no such directory."""
    if not model_dir.is_dir():
        return None
    digest = hashlib.sha256()
    for path in sorted(model_dir.rglob("*")):
        if path.suffix not in WEIGHT_SUFFIXES or not path.is_file():
            continue
        size = path.stat().st_size
        digest.update(f"{path.relative_to(model_dir)}\0{size}\0".encode())
        with path.open("rb") as file:
            digest.update(file.read(_SAMPLED))
            file.seek(max(size - _SAMPLED, 0))
            digest.update(file.read(_SAMPLED))
    return digest.hexdigest()


def fingerprint(path: Path) -> dict[str, Any] | None:
    """A file's sha256 and size; a directory's hash of (path, size, mtime) of its files (a
    model directory of gigabytes is not read); None when nothing is there."""
    if path.is_file():
        digest = hashlib.sha256()
        with path.open("rb") as file:
            while chunk := file.read(1 << 20):
                digest.update(chunk)
        return {"sha256": digest.hexdigest(), "size": path.stat().st_size}
    if path.is_dir():
        listing = hashlib.sha256()
        files = sorted(item for item in path.rglob("*") if item.is_file())
        for item in files:
            stat = item.stat()
            listing.update(
                f"{item.relative_to(path)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode()
            )
        return {"files": len(files), "size_mtime_sha256": listing.hexdigest()}
    return None


def fingerprints(paths: Sequence[Path]) -> dict[str, Any]:
    return {str(path): fingerprint(path) for path in paths}
