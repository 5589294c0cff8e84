"""docs/iterate.md's config reference is generated from IterateConfig's fields and kept
current by this test (UPDATE_SNAPSHOTS=1 rewrites it)."""

from __future__ import annotations

import os
import re
import types
import typing
from pathlib import Path

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from agentcli.iterate import IterateConfig

PAGE = Path(__file__).parents[2] / "docs" / "iterate.md"
START, END = "<!-- config reference: start -->", "<!-- config reference: end -->"


def _type(annotation) -> str:
    if annotation is type(None):
        return "None"
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return "section" if issubclass(annotation, BaseModel) else annotation.__name__
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " \\| ".join(str(arg) for arg in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type(arg) for arg in typing.get_args(annotation))
    return re.sub(r"\b[a-z_]+\.", "", str(annotation))  # typing.Any, agentcli.teacher.Price


def _section(annotation) -> type[BaseModel] | None:
    """The model of a section field (``X`` or ``X | None``), else None."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _default(info) -> str:
    if info.is_required():
        return "required"
    if info.default is PydanticUndefined:
        value = info.default_factory()
        return "" if isinstance(value, BaseModel) else f"`{value!r}`"
    return f"`{info.default!r}`"


def _table(model: type[BaseModel]) -> list[str]:
    lines = ["| key | type | default | what |", "|---|---|---|---|"]
    for name, info in model.model_fields.items():
        what = (info.description or "").replace("|", "\\|")
        lines.append(f"| `{name}` | {_type(info.annotation)} | {_default(info)} | {what} |")
    return lines


def reference() -> str:
    lines = ["### Top level", "", *_table(IterateConfig)]
    for name, info in IterateConfig.model_fields.items():
        section = _section(info.annotation)
        if section is None:
            continue
        doc = " ".join((section.__doc__ or "").split())
        lines += ["", f"### `{name}`", "", info.description, "", doc, "", *_table(section)]
        for inner, inner_info in section.model_fields.items():
            nested = _section(inner_info.annotation)
            if nested is not None:
                lines += ["", f"#### `{name}.{inner}`", "", *_table(nested)]
    return "\n".join(lines)


def test_the_config_reference_is_current():
    page = PAGE.read_text()
    before, rest = page.split(START)
    _, after = rest.split(END)
    current = f"{before}{START}\n{reference()}\n{END}{after}"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        PAGE.write_text(current)
    assert page == current, "docs/iterate.md is stale: rerun with UPDATE_SNAPSHOTS=1"
