"""Command configuration: one pydantic model per command, filled from layered sources.

Precedence, lowest first: model defaults < YAML ``--config`` file < ``.env`` file <
``AGENTGYM_*`` environment variables < CLI options < ``key=value`` overrides. Nested mappings
merge key by key, so one override of one key keeps the rest of its section. Then ``{iter}`` and
``{prev_iter}`` are replaced in every string, and the model validates the result. Every failure
is a ``ConfigError`` with one line: the field, what is wrong, the value and where it came from,
and how to fix it. See docs/configuration.md.
"""

from __future__ import annotations

import difflib
import itertools
import os
import re
import types
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

import yaml
from dotenv import dotenv_values
from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

from agentcli.common import write_atomic
from agentcli.errors import ConfigError

ENV_PREFIX = "AGENTGYM_"
ENV_NESTING = "__"
REDACTED = "***"

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# pydantic's wording, shortened: "Input should be greater than or equal to 1" -> "must be ≥ 1".
_SHORTER_WORDING = (
    ("Value error, ", ""),
    ("Input should be", "must be"),
    ("greater than or equal to", "≥"),
    ("less than or equal to", "≤"),
    ("greater than", ">"),
    ("less than", "<"),
)

ConfigT = TypeVar("ConfigT", bound="CommandConfig")
KeyPath = tuple[str | int, ...]


class CommandConfig(BaseModel):
    """Base of every command's config: unknown keys are errors and defaults are validated too."""

    model_config = ConfigDict(extra="forbid", validate_default=True)


def resolve_config(
    model: type[ConfigT],
    *,
    config_file: Path | None = None,
    cli: Mapping[str, Any] | None = None,
    overrides: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    dotenv: Path | None = Path(".env"),
) -> ConfigT:
    """Merge every source into one validated ``model``.

    ``cli`` holds only the options the user gave (a None value counts as not given); its keys
    may be dotted like overrides. ``environ`` defaults to ``os.environ``; ``dotenv`` is skipped
    when it does not exist.
    """
    data: dict[str, Any] = {}
    sources: dict[KeyPath, str] = {}  # where each value came from, for error messages
    if config_file is not None:
        for path, layer in config_layers(config_file):
            _merge(data, layer, f"--config {path}", sources)
    if dotenv is not None and dotenv.is_file():
        _merge_environment(
            data, model, dotenv_values(dotenv, interpolate=False), f"in {dotenv}", sources
        )
    _merge_environment(data, model, os.environ if environ is None else environ, "", sources)
    for key, value in (cli or {}).items():
        if value is not None:
            _merge(data, _nested(tuple(key.split(".")), value), "the command-line option", sources)
    for override in overrides:
        key, value = _parse_override(model, override)
        _merge(data, _nested(key, value), f"override {_dotted(key)}", sources)
    data = _fill_placeholders(data, _iteration(model, data, sources), ())
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise ConfigError(_describe(model, error, sources)) from None


def config_as_data(config: BaseModel) -> Any:
    """The resolved config as plain JSON-able data, secrets replaced by ``***``."""
    return to_jsonable_python(_redact(config.model_dump(mode="python")))


def config_as_yaml(config: BaseModel) -> str:
    """The resolved config as YAML, secrets replaced by ``***`` (for ``--print-config``)."""
    return yaml.safe_dump(config_as_data(config), sort_keys=False, allow_unicode=True)


def validate_config(model: type[ConfigT], data: Mapping[str, Any], *, source: str) -> ConfigT:
    """``model`` from ``data`` built by code (e.g. one stage's config inside ``iterate``), with
    the same one-line ``ConfigError`` as ``resolve_config``; ``source`` names where it came from."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        sources: dict[KeyPath, str] = {(key,): source for key in data}
        raise ConfigError(_describe(model, error, sources)) from None


def dump_config(config: BaseModel, path: Path) -> None:
    """Write ``config_as_yaml`` to ``path`` atomically, so a killed run never leaves half a file."""
    write_atomic(path, config_as_yaml(config))


# --- sources ---------------------------------------------------------------------------------

EXTENDS = "extends"  # a config file's key naming the file it builds on


def config_layers(path: Path) -> list[tuple[Path, dict[str, Any]]]:
    """``path``'s config and each it ``extends:`` (a file named relative to the one naming it),
    the furthest base first: each layer merges over the ones before it."""
    layers: list[tuple[Path, dict[str, Any]]] = []
    while True:
        if any(path.resolve() == seen.resolve() for seen, _ in layers):
            chain = " → ".join(str(seen) for seen, _ in layers)
            raise ConfigError(f"--config {chain} → {path}: the files extend each other in a loop")
        data = _read_yaml(path)
        base = data.pop(EXTENDS, None)
        layers.append((path, data))
        if base is None:
            return layers[::-1]
        if not isinstance(base, str) or not base:
            raise ConfigError(
                f"--config {path}: {EXTENDS} must name one config file (e.g. {EXTENDS}:"
                " quickstart.yaml, relative to this file)"
            )
        if not (path.parent / base).is_file():
            raise ConfigError(
                f"--config {path}: {EXTENDS}: {base} is not a file (looked for"
                f" {path.parent / base}) — name it relative to {path}"
            )
        path = path.parent / base


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or "not UTF-8 text"
        raise ConfigError(f"--config {path}: cannot read it ({reason}) — check the path") from None
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" at line {where.line + 1}" if where else ""
        problem = getattr(error, "problem", None) or "syntax error"
        raise ConfigError(
            f"--config {path}: invalid YAML{line}: {problem} — fix the file"
        ) from None
    if data is None:  # an empty file, or one holding only comments
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"--config {path}: the top level must be a mapping of keys to values"
            f" (got a {type(data).__name__}) — write it as `key: value` lines"
        )
    return data


def _merge_environment(
    data: dict[str, Any],
    model: type[BaseModel],
    environ: Mapping[str, str | None],
    where: str,
    sources: dict[KeyPath, str],
) -> None:
    """Merge ``AGENTGYM_<FIELD>[__<SUBFIELD>…]`` entries whose first part is a field of ``model``.

    The environment is shared by every command, so a variable meant for another command's
    field is skipped instead of rejected; below a known field, unknown keys are errors.
    """
    for name in sorted(environ):  # sorted: a whole section (X) merges before its keys (X__Y)
        text = environ[name]
        if not name.startswith(ENV_PREFIX) or text is None:
            continue
        key = tuple(name[len(ENV_PREFIX) :].lower().split(ENV_NESTING))
        if key[0] in model.model_fields:
            label = f"{name} {where}" if where else f"environment variable {name}"
            _merge(data, _nested(key, _parse_value(model, key, text, label)), label, sources)


def _parse_override(model: type[BaseModel], override: str) -> tuple[KeyPath, Any]:
    key, equals, text = override.partition("=")
    key = key.strip()
    parts = key.split(".")
    if not equals or not all(part.isdigit() or re.fullmatch(_NAME, part) for part in parts):
        shown = f"{key}=…" if equals else override  # the value may be a secret
        raise ConfigError(
            f"override {shown!r}: not KEY=VALUE — write it as a dotted key, '=' and a value,"
            " e.g. rollout.concurrency=8"
        )
    path: KeyPath = ()
    for part in parts:
        if part.isdigit():
            if not _keyed_by_int(_annotation_at(model, path)):
                raise ConfigError(
                    f"override {key}=…: {part!r} is a number, and {_dotted(path) or 'the top'}"
                    " is not a mapping keyed by numbers (iterations.1 is): set a list's item in"
                    " the YAML config"
                )
            path = (*path, int(part))
        else:
            path = (*path, part)
    return path, _parse_value(model, path, text, f"override {key}")


def _keyed_by_int(annotation: Any) -> bool:
    annotation = strip_optional(annotation)
    return get_origin(annotation) is dict and get_args(annotation)[:1] == (int,)


def _parse_value(model: type[BaseModel], key: KeyPath, text: str, label: str) -> Any:
    """Text fields (str, Path, SecretStr) take ``text`` as written; others parse it as YAML.

    Parsing a run name like ``2024-01-01`` or a key like ``0123`` as YAML would change it, so
    only ``null`` / ``~`` are special for text fields (they clear an optional value).
    """
    if strip_optional(_annotation_at(model, key)) in (str, Path, SecretStr):
        return None if text in ("null", "~") else text
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        raise ConfigError(
            f"{_dotted(key)}: {text!r} is not a valid YAML value (from {label})"
            " — quote it or fix the brackets"
        ) from None


def _nested(key: KeyPath, value: Any) -> dict[str, Any]:
    for part in reversed(key[1:]):
        value = {part: value}
    return {key[0]: value}


def _merge(
    data: dict[str, Any],
    layer: Mapping[str, Any],
    label: str,
    sources: dict[KeyPath, str],
    at: KeyPath = (),
) -> None:
    """Merge ``layer`` into ``data`` in place: mappings key by key, anything else replaced.

    Mappings are copied as they merge, so later layers never change the caller's objects.
    """
    for key, value in layer.items():
        sources[(*at, key)] = label
        if isinstance(value, Mapping):
            if not isinstance(data.get(key), dict):
                data[key] = {}
            _merge(data[key], value, label, sources, (*at, key))
        else:
            data[key] = value


# --- {iter} / {prev_iter} ----------------------------------------------------------------------


def _iteration(
    model: type[BaseModel], data: Mapping[str, Any], sources: Mapping[KeyPath, str]
) -> int | None:
    """The ``iter`` value: from the merged data, else the model's default, else None."""
    if "iter" in data:
        value = data["iter"]
    elif "iter" in model.model_fields and not model.model_fields["iter"].is_required():
        value = model.model_fields["iter"].get_default(call_default_factory=True)
    else:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).isdigit():
        origin = f" from {sources[('iter',)]}" if ("iter",) in sources else ""
        raise ConfigError(f"iter: must be a whole number ≥ 0 (got {value!r}{origin}) — pass iter=N")
    return int(value)


def _fill_placeholders(value: Any, iteration: int | None, at: KeyPath) -> Any:
    """Replace ``{iter}`` and ``{prev_iter}`` only; other braces (JSON, Jinja) stay as they are."""
    if isinstance(value, dict):
        return {
            key: _fill_placeholders(inner, iteration, (*at, key)) for key, inner in value.items()
        }
    if isinstance(value, list):
        return [_fill_placeholders(inner, iteration, (*at, i)) for i, inner in enumerate(value)]
    if not isinstance(value, str) or ("{iter}" not in value and "{prev_iter}" not in value):
        return value
    if iteration is None:
        raise ConfigError(
            f"{_dotted(at)}: uses {{iter}} or {{prev_iter}} but this command has no iter value"
            f" (got {value!r}) — write the number instead"
        )
    if "{prev_iter}" in value and iteration == 0:
        raise ConfigError(
            f"{_dotted(at)}: {{prev_iter}} needs iter ≥ 1 but iter is 0 (got {value!r})"
            " — pass iter=1 or higher, or drop {prev_iter} from this value"
        )
    return value.replace("{prev_iter}", str(iteration - 1)).replace("{iter}", str(iteration))


# --- error messages ----------------------------------------------------------------------------


def _describe(model: type[BaseModel], error: ValidationError, sources: dict[KeyPath, str]) -> str:
    """One line for the first problem; the count of the others, since they are fixed in turn."""
    problems = error.errors(include_url=False)
    first = problems[0]
    at: KeyPath = tuple(first["loc"])
    field = _dotted(at) or "config"
    # Overrides cannot reach into a list: name the whole list in the fix.
    settable = _dotted(tuple(itertools.takewhile(lambda part: isinstance(part, str), at)))
    source = _source_of(at, sources)
    origin = f" from {source}" if source else ""
    problem = shorter_wording(first["msg"])
    if first["type"] == "extra_forbidden":
        where = f" (from {source})" if source else ""
        line = f"{field}: unknown key{where} — {_suggest(model, at)}"
    elif first["type"] == "missing":
        line = f"{field}: required but not given — set it in --config FILE or pass {field}=VALUE"
    elif not at:  # a check across fields (a model validator)
        line = f"config: {problem} — change the fields it names"
    elif first["type"] == "value_error" and isinstance(first["input"], Mapping):
        line = f"{field}: {problem}"  # a section's own check, which says what to give
    else:
        shown = _show_value(model, at, first["input"])
        if source and not source.startswith("override"):
            fix = f"correct {source}, or override it with {settable}=VALUE"
        else:
            fix = f"pass a valid value: {settable}=VALUE"
        line = f"{field}: {problem} (got {shown}{origin}) — {fix}"
    if len(problems) > 1:
        line += f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})"
    return line


def shorter_wording(problem: str) -> str:
    """pydantic's wording of a problem, shortened (Typer checks options with pydantic too)."""
    for long, short in _SHORTER_WORDING:
        problem = problem.replace(long, short)
    return problem


def _suggest(model: type[BaseModel], at: KeyPath) -> str:
    parent = strip_optional(_annotation_at(model, at[:-1]))
    if not (isinstance(parent, type) and issubclass(parent, BaseModel)):
        return "remove it"
    valid = list(parent.model_fields)
    prefix = _dotted(at[:-1]) + "." if len(at) > 1 else ""
    close = difflib.get_close_matches(str(at[-1]), valid, n=1)
    hint = f"did you mean {prefix}{close[0]}?" if close else "remove it or fix its name"
    if len(valid) <= 12:
        hint += f"; valid keys{f' under {prefix[:-1]}' if prefix else ''}: {', '.join(valid)}"
    return hint


def _show_value(model: type[BaseModel], at: KeyPath, value: Any) -> str:
    if strip_optional(_annotation_at(model, at)) is SecretStr:
        return REDACTED
    if isinstance(value, Mapping):  # a whole section may hold secrets: do not print it
        return "a mapping"
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _source_of(at: KeyPath, sources: Mapping[KeyPath, str]) -> str:
    """Where the value at ``at`` (or the nearest section above it) came from, or ""."""
    for end in range(len(at), 0, -1):
        if at[:end] in sources:
            return sources[at[:end]]
    return ""


def _dotted(at: KeyPath) -> str:
    return ".".join(str(part) for part in at)


# --- types -------------------------------------------------------------------------------------


def field_at(model: type[BaseModel], key: str) -> FieldInfo:
    """The field of ``model`` at dotted ``key`` (``policy.kind``: the ``kind`` field of the
    ``policy`` section); a ``KeyError`` naming the key when there is none."""
    *sections, name = key.split(".")
    owner = strip_optional(_annotation_at(model, tuple(sections)))
    fields = owner.model_fields if isinstance(owner, type) and issubclass(owner, BaseModel) else {}
    if name not in fields:
        raise KeyError(f"{model.__name__} has no field {key}")
    return fields[name]


def _annotation_at(model: type[BaseModel], at: KeyPath) -> Any:
    """The type annotation of the field at ``at`` (names and list indices), or None if unknown."""
    annotation: Any = model
    for part in at:
        annotation = strip_optional(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = annotation.model_fields.get(part) if isinstance(part, str) else None
            if field is None:
                return None
            annotation = field.annotation
        elif get_origin(annotation) in (list, dict) and get_args(annotation):
            annotation = get_args(annotation)[-1]  # list[X] -> X, dict[K, V] -> V
        else:
            return None
    return annotation


def strip_optional(annotation: Any) -> Any:
    """``X | None`` and ``Annotated[X, ...]`` -> ``X``; other annotations unchanged."""
    if get_origin(annotation) is Annotated:
        return strip_optional(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(members) == 1:
            return strip_optional(members[0])
    return annotation


def _redact(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return REDACTED
    if isinstance(value, dict):
        return {key: _redact(inner) for key, inner in value.items()}
    if isinstance(value, list | tuple):
        return [_redact(inner) for inner in value]
    return value
