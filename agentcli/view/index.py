"""An index of a JSONL file of records, built in one streaming pass: each line's byte offset
and length, and the few fields the episode list filters on. A page then reads only its own
records back, by offset, so a file of 100,000 episodes (a gigabyte of text) is listed,
filtered and paged in tens of milliseconds while the index holds some 60 bytes a record.

The file may still be growing (a rollout in progress): ``Indexes`` rebuilds a file's index
when its size or modification time changes, and a last line left unfinished by a writer is
skipped, as ``agentcli.data.jsonl`` skips it. Any other line that is not a JSON record is an
error naming the file and line.
"""

from __future__ import annotations

import json
import threading
from array import array
from collections import Counter, OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentcli.data.records import parse_item_id
from agentcli.errors import AgentGymError, UsageError

Kind = Literal["episodes", "corrections", "privileged"]
# The keys that say which record a line holds (Episode, Correction, PrivilegedState).
_KIND_KEYS: tuple[tuple[Kind, frozenset[str]], ...] = (
    ("episodes", frozenset({"item_id", "instruction", "steps"})),
    ("corrections", frozenset({"item_id", "summary", "steps"})),
    ("privileged", frozenset({"item_id", "text"})),
)
_SEARCHES_KEPT = 8  # text searches remembered per index (a page turn must not redo one)


@dataclass(frozen=True)
class Stamp:
    """What identifies a file's contents cheaply: a change to either means a new index."""

    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Path) -> Stamp:
        status = path.stat()
        return cls(status.st_size, status.st_mtime_ns)


class Codes:
    """A column of few distinct strings (end reasons, categories): one small int a row."""

    def __init__(self) -> None:
        self.values: list[str | None] = []
        self._code: dict[str | None, int] = {}
        self.rows = array("I")

    def append(self, value: str | None) -> None:
        code = self._code.get(value)
        if code is None:
            code = self._code[value] = len(self.values)
            self.values.append(value)
        self.rows.append(code)

    def __getitem__(self, row: int) -> str | None:
        return self.values[self.rows[row]]

    def code(self, value: str) -> int | None:
        return self._code.get(value)

    def counts(self) -> list[tuple[str, int]]:
        """(value, rows holding it), most frequent first; rows without a value left out."""
        counted = Counter(self.rows)
        pairs = [(self.values[code], count) for code, count in counted.items()]
        return sorted(((v, n) for v, n in pairs if v is not None), key=lambda p: (-p[1], p[0]))


@dataclass(frozen=True)
class Filters:
    """What the episode list shows; None or empty: no condition on that field."""

    success: bool | None = None
    end_reason: str | None = None
    category: str | None = None
    item: str | None = None  # the item id contains this
    text: str | None = None  # some text of the record contains this, ignoring case
    corrected: bool | None = None  # the teacher changed at least one step of the episode


class RecordIndex:
    """Offsets and filter fields of every record of one JSONL file, in file order."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stamp = Stamp.of(path)
        self.kind: Kind | None = None  # None: the file holds no record yet
        self.offsets = array("q")
        self.lengths = array("L")
        self.item_ids: list[str] = []
        self.success = bytearray()
        self.rewards = array("d")
        self.steps = array("L")
        self.end_reasons = Codes()
        self.categories = Codes()
        self.changed = array("l")  # corrections: steps the teacher changed
        self.first_change = array("l")  # corrections: the first such step, -1 when none
        self._rows_by_item: dict[str, int] | None = None
        self._searches: OrderedDict[str, bytearray] = OrderedDict()
        self._lock = threading.Lock()
        self._build()

    def __len__(self) -> int:
        return len(self.offsets)

    # --- reading --------------------------------------------------------------------------

    def raw(self, row: int) -> bytes:
        """The record's line as the file holds it, without its newline."""
        self._check_row(row)
        with self.path.open("rb") as file:
            file.seek(self.offsets[row])
            return file.read(self.lengths[row])

    def record(self, row: int) -> dict[str, Any]:
        return json.loads(self.raw(row))

    def records(self, rows: list[int]) -> Iterator[tuple[int, dict[str, Any]]]:
        """(row, record) of each of ``rows`` (in increasing order: one pass over the file)."""
        with self.path.open("rb") as file:
            for row in rows:
                self._check_row(row)
                file.seek(self.offsets[row])
                yield row, json.loads(file.read(self.lengths[row]))

    def row_of(self, item_id: str) -> int | None:
        """The last record of ``item_id`` (a rerun appends a new one: the last counts)."""
        with self._lock:
            if self._rows_by_item is None:
                self._rows_by_item = {item: row for row, item in enumerate(self.item_ids)}
        return self._rows_by_item.get(item_id)

    def _check_row(self, row: int) -> None:
        if not 0 <= row < len(self):
            raise UsageError(f"{self.path} has no record {row} (it has {len(self)})")

    # --- filtering ------------------------------------------------------------------------

    def matching(self, filters: Filters, corrected: RecordIndex | None = None) -> list[int]:
        """The rows that pass ``filters``, in file order; ``corrected`` is the index of the
        corrections of this file's episodes (for ``filters.corrected``)."""
        conditions = []
        if filters.success is not None:
            wanted = int(filters.success)
            conditions.append(lambda row: self.success[row] == wanted)
        for value, column in ((filters.end_reason, self.end_reasons),
                              (filters.category, self.categories)):  # fmt: skip
            if value:
                code = column.code(value)
                if code is None:
                    return []
                codes = column.rows
                conditions.append(lambda row, codes=codes, code=code: codes[row] == code)
        if filters.item:
            item, ids = filters.item, self.item_ids
            conditions.append(lambda row: item in ids[row])
        if filters.corrected is not None:
            if self.kind == "corrections":
                changes = self.changed
            elif corrected is not None:
                changes = array("l", (_changes(corrected, item) for item in self.item_ids))
            else:
                changes = array("l", [0]) * len(self)
            wanted_change = filters.corrected
            conditions.append(lambda row: (changes[row] > 0) == wanted_change)
        rows: list[int] = [row for row in range(len(self)) if all(c(row) for c in conditions)]
        if filters.text:
            found = self._search(filters.text)
            rows = [row for row in rows if found[row]]
        return rows

    def _search(self, text: str) -> bytearray:
        """1 for each row some string of whose record contains ``text``, ignoring case."""
        query = text.lower()
        with self._lock:
            if query in self._searches:
                self._searches.move_to_end(query)
                return self._searches[query]
        found = bytearray(len(self))
        # A plain ASCII query appears in the line itself, escapes aside: test the raw bytes
        # first and parse only the lines that hold it (keys such as "action" match the raw
        # line of every record, which the parse then rules out).
        plain = query.isascii() and query.isprintable() and not any(c in query for c in '"\\')
        needle = query.encode("ascii") if plain else b""
        with self.path.open("rb") as file:
            for row in range(len(self)):
                file.seek(self.offsets[row])
                line = file.read(self.lengths[row])
                if plain and needle not in line.lower():
                    continue
                found[row] = query in searchable_text(json.loads(line))
        with self._lock:
            self._searches[query] = found
            if len(self._searches) > _SEARCHES_KEPT:
                self._searches.popitem(last=False)
        return found

    # --- building -------------------------------------------------------------------------

    def _build(self) -> None:
        with self.path.open("rb") as file:
            offset = 0
            for number, line in enumerate(file, start=1):
                start, offset = offset, offset + len(line)
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except ValueError as error:
                    if not line.endswith(b"\n"):  # a writer stopped mid-record: not a record yet
                        return
                    raise UsageError(
                        f"{self.path} line {number}: not valid JSON ({error}) — fix or delete"
                        " that line"
                    ) from None
                self._add(value, number, start, len(line.rstrip(b"\r\n")))

    def _add(self, value: Any, number: int, offset: int, length: int) -> None:
        kind = _kind_of(value)
        if kind is None or (self.kind is not None and kind != self.kind):
            expected = f"a record like those before it ({self.kind})" if self.kind else (
                "an Episode, a Correction or a PrivilegedState record")  # fmt: skip
            raise UsageError(
                f"{self.path} line {number}: not {expected} — view shows files of episodes,"
                " corrections or privileged state"
            )
        self.kind = kind
        self.offsets.append(offset)
        self.lengths.append(length)
        self.item_ids.append(value["item_id"])
        steps = value.get("steps") or []
        self.steps.append(len(steps))
        self.success.append(value.get("success") is True)
        reward = value.get("reward")
        self.rewards.append(float(reward) if isinstance(reward, int | float) else 0.0)
        meta = value.get("meta")
        reason = meta.get("end_reason") if isinstance(meta, dict) else None
        self.end_reasons.append(reason if isinstance(reason, str) else None)
        self.categories.append(category_of(value["item_id"]))
        changed = [s.get("t", -1) for s in steps if isinstance(s, dict) and s.get("is_corrected")]
        self.changed.append(len(changed))
        self.first_change.append(min(changed, default=-1))


def _kind_of(value: Any) -> Kind | None:
    if not isinstance(value, dict) or not isinstance(value.get("item_id"), str):
        return None
    return next((kind for kind, keys in _KIND_KEYS if keys <= value.keys()), None)


def _changes(corrections: RecordIndex, item_id: str) -> int:
    row = corrections.row_of(item_id)
    return 0 if row is None else corrections.changed[row]


def searchable_text(value: Any) -> str:
    """Every string of a record, lowercased, one per line: what the text search looks in (the
    static export's page searches the same way)."""
    parts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            parts.append(node)
        elif isinstance(node, dict):
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(value)
    return "\n".join(parts).lower()


def category_of(item_id: str) -> str | None:
    """The item's task category (sciworld task, alfworld type, babyai level) where its env is
    built in and has categories, as eval's per-category metrics name it."""
    from agentcli.envs.registry import SPECS

    try:
        env, index = parse_item_id(item_id)
    except UsageError:
        return None
    spec = SPECS.get(env)
    if spec is None or spec.categories is None:
        return None
    try:
        return spec.categories(index)
    except AgentGymError:  # an index the env does not have (an imported file's): no category
        return None


class Indexes:
    """One index per file, rebuilt when the file changes; shared by a server's requests."""

    def __init__(self) -> None:
        self._indexes: dict[Path, RecordIndex] = {}
        self._lock = threading.Lock()

    def get(self, path: Path) -> RecordIndex:
        with self._lock:
            index = self._indexes.get(path)
            if index is None or index.stamp != Stamp.of(path):
                index = self._indexes[path] = RecordIndex(path)
            return index
