"""What a foreign file held that our rendering of its Episode does not reproduce.

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

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agentcli.records import Episode

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class JsonLayout:
    """How a JSON file is laid out, as arguments of ``json.dumps``."""

    indent: int | str | None
    ensure_ascii: bool
    final_newline: bool = False

    def dump(self, data: Any) -> str:
        text = json.dumps(data, indent=self.indent, ensure_ascii=self.ensure_ascii)
        return text + "\n" if self.final_newline else text


def keep(
    source: Any, rendered: Any, name: str, layout: JsonLayout | None, usual: JsonLayout
) -> dict[str, Any]:
    """What to keep in the Episode's meta: the difference under ``name``, and the layout
    when it is not the format's usual one."""
    kept: dict[str, Any] = {}
    found = difference(source, rendered)
    if found is not None:
        kept[name] = found
    if layout is not None and layout != usual:
        kept["json"] = asdict(layout)
    return kept


def difference(source: Any, rendered: Any) -> dict[str, Any] | None:
    """What turns ``rendered`` into ``source`` (see the module docstring); None if nothing."""
    if _same(source, rendered):
        return None
    if isinstance(source, dict) and isinstance(rendered, dict):
        fields = {}
        for key, value in source.items():
            inner = difference(value, rendered[key]) if key in rendered else {"value": value}
            if inner is not None:
                fields[key] = inner
        found: dict[str, Any] = {"fields": fields} if fields else {}
        if list(source) != list(rendered):
            found["keys"] = list(source)
        return found
    if isinstance(source, list) and isinstance(rendered, list) and len(source) == len(rendered):
        items = {}
        for position, (value, ours) in enumerate(zip(source, rendered, strict=True)):
            inner = difference(value, ours)
            if inner is not None:
                items[str(position)] = inner
        return {"items": items}
    return {"value": source}


def restore(rendered: Any, kept: dict[str, Any] | None) -> Any:
    """Apply a difference (from ``difference``) to ``rendered``: the source comes back."""
    if kept is None:
        return rendered
    if "value" in kept:
        return kept["value"]
    if "items" in kept:
        items = kept["items"]
        return [restore(value, items.get(str(i))) for i, value in enumerate(rendered)]
    fields = kept.get("fields", {})
    return {key: restore(rendered.get(key), fields.get(key)) for key in kept.get("keys", rendered)}


def _same(first: Any, second: Any) -> bool:
    # Compared as JSON text: 1 and 1.0 and True differ, and so does key order.
    return json.dumps(first) == json.dumps(second)


def detect_layout(text: str, data: Any, usual: JsonLayout, path: Path) -> JsonLayout | None:
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


def layout_of(episodes: Sequence[Episode], key: str, usual: JsonLayout) -> JsonLayout:
    """The layout kept under ``meta[key]`` by the first episode that kept one, else ``usual``."""
    for episode in episodes:
        if "json" in episode.meta.get(key, {}):
            return JsonLayout(**episode.meta[key]["json"])
    return usual
