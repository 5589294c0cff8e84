"""Write the config reference of docs/iterate.md from IterateConfig's fields and help.

    .venv/bin/python scripts/iterate_reference.py          # rewrite it in docs/iterate.md
    .venv/bin/python scripts/iterate_reference.py --check  # exit 1 if it is stale

A test runs the check, so a change to any iterate setting shows up as a diff of the page.
"""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path

from generated_page import write_or_check
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from agentcli.iterate.config import SECTION_SEEDS, IterateConfig

PAGE = Path(__file__).resolve().parent.parent / "docs" / "iterate.md"
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


def _table(model: type[BaseModel], at: str = "") -> list[str]:
    lines = ["| key | type | default | what |", "|---|---|---|---|"]
    for name, info in model.model_fields.items():
        if name == "seed" and at in SECTION_SEEDS:  # iterate sets it: the key is refused
            lines.append(f"| `{name}` | | the run's `seed` | Set by iterate; not a key here. |")
            continue
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
        lines += ["", f"### `{name}`", "", info.description, "", doc, ""]
        lines += _table(section, name)
        for inner, inner_info in section.model_fields.items():
            nested = _section(inner_info.annotation)
            if nested is not None:
                lines += ["", f"#### `{name}.{inner}`", "", *_table(nested, f"{name}.{inner}")]
    return "\n".join(lines)


def render() -> str:
    """The page with its reference block rewritten."""
    before, rest = PAGE.read_text().split(START)
    _, after = rest.split(END)
    return f"{before}{START}\n{reference()}\n{END}{after}"


def main() -> None:
    write_or_check(PAGE, render, script="iterate_reference.py", description=__doc__.split("\n")[0])


if __name__ == "__main__":
    main()
