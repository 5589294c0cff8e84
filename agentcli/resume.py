"""Resuming an output only when it holds records of the same settings.

A resumable stage appends records to its output and, rerun, skips the items already there.
That is only right when the records were made with the settings that shape them (the model and
its weights, the policy, the env and split, the turns allowed, what the student is shown...);
operational settings (concurrency, servers, retries) may change. ``guard_output`` keeps those
settings beside the records (``<name>.settings.json``) and refuses a rerun whose settings
differ, naming what changed and the two ways out.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli.common import write_atomic
from agentcli.errors import UsageError

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt")
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
    elif records.exists() and records.stat().st_size > 0:
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
    write_atomic(kept, json.dumps(settings, indent=2, sort_keys=True, default=str) + "\n")


def changed_settings(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """``key: old → new`` for each dotted key whose value differs."""
    flat_old, flat_new = flatten(old), flatten(new)
    return [
        f"{key}: {flat_old.get(key)!r} → {flat_new.get(key)!r}"
        for key in sorted(flat_old.keys() | flat_new.keys())
        if flat_old.get(key) != flat_new.get(key)
    ]


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
