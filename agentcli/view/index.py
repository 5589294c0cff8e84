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

import functools
import itertools
import json
import operator
import threading
from array import array
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentcli.common import END_MAX_ROUNDS
from agentcli.errors import AgentGymError, UsageError
from agentcli.evaluate import loop_period

Kind = Literal["episodes", "corrections", "privileged"]
Loop = Literal["looped", "stuck"]
LOOPS: tuple[Loop, ...] = ("looped", "stuck")
# The keys that say which record a line holds (Episode, Correction, PrivilegedState).
_KIND_KEYS: dict[Kind, frozenset[str]] = {
    "episodes": frozenset({"item_id", "instruction", "steps"}),
    "corrections": frozenset({"item_id", "summary", "steps"}),
    "privileged": frozenset({"item_id", "text"}),
}
_SEARCHES_KEPT = 8  # text searches remembered per index (a page turn must not redo one)
_FLIP = bytes.maketrans(b"\x00\x01", b"\x01\x00")


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
    """A column of few distinct strings (end reasons, categories): one small int a row, one
    byte while there are at most 256 values, so that a filter on one value is a byte
    translation of the column rather than a loop over its rows."""

    def __init__(self) -> None:
        self.values: list[str | None] = []
        self._code: dict[str | None, int] = {}
        self.rows = array("B")
        self._counts: list[tuple[str, int]] | None = None

    def append(self, value: str | None) -> None:
        self._counts = None
        code = self._code.get(value)
        if code is None:
            code = self._code[value] = len(self.values)
            self.values.append(value)
            if code == 256:
                self.rows = array("I", self.rows)
        self.rows.append(code)

    def __getitem__(self, row: int) -> str | None:
        return self.values[self.rows[row]]

    def mask(self, value: str) -> bytes:
        """1 for each row holding ``value``, else 0."""
        code = self._code.get(value)
        if code is None:
            return bytes(len(self.rows))
        if self.rows.typecode == "B":
            return self.rows.tobytes().translate(bytes(int(c == code) for c in range(256)))
        return bytes(c == code for c in self.rows)

    def counts(self) -> list[tuple[str, int]]:
        """(value, rows holding it), most frequent first; rows without a value left out."""
        if self._counts is None:
            pairs = [(self.values[code], n) for code, n in Counter(self.rows).items()]
            self._counts = sorted(((v, n) for v, n in pairs if v is not None),
                                  key=lambda pair: (-pair[1], pair[0]))  # fmt: skip
        return self._counts


@dataclass(frozen=True)
class Filters:
    """What the episode list shows; None or empty: no condition on that field."""

    success: bool | None = None
    end_reason: str | None = None
    category: str | None = None
    item: str | None = None  # the item id contains this
    text: str | None = None  # some text of the record contains this, ignoring case
    corrected: bool | None = None  # the teacher changed at least one step of the episode
    # ran out of rounds in a loop (looped), or repeating an action that changed nothing (stuck)
    loop: Loop | None = None


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
        self.loop_periods = array("I")  # episodes: ``evaluate.loop_period``, 0 for none
        self.categories = Codes()
        self.changed = array("l")  # corrections: steps the teacher changed
        self.first_change = array("l")  # corrections: the first such step, -1 when none
        self._category = Categories()
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
        corrections of this file's episodes (for ``filters.corrected``).

        Each condition is a mask (a byte a row, 1 where it holds), made by C-level byte
        operations where it can be; the masks are and-ed as big integers."""
        masks: list[bytes | bytearray] = []
        if filters.success is not None:
            masks.append(self.success if filters.success else self.success.translate(_FLIP))
        if filters.end_reason:
            masks.append(self.end_reasons.mask(filters.end_reason))
        if filters.category:
            masks.append(self.categories.mask(filters.category))
        if filters.loop:
            masks.append(self._loop_mask(filters.loop))
        if filters.item:
            masks.append(bytes(filters.item in item for item in self.item_ids))
        if filters.corrected is not None:
            changes = self._changes(corrected)
            masks.append(bytes((change > 0) == filters.corrected for change in changes))
        if filters.text:
            masks.append(self._search(filters.text))
        if not masks:
            return list(range(len(self)))
        every = functools.reduce(operator.and_, (int.from_bytes(m, "little") for m in masks))
        return list(itertools.compress(range(len(self)), every.to_bytes(len(self), "little")))

    def _loop_mask(self, loop: Loop) -> bytes:
        if loop == "stuck":
            return bytes(period == 1 for period in self.loop_periods)
        return bytes(period > 0 for period in self.loop_periods)

    def loop_counts(self) -> list[tuple[str, int]]:
        """(looped, episodes), (stuck, episodes): the list's choices; none in a file without."""
        looped = len(self.loop_periods) - self.loop_periods.count(0)
        return [("looped", looped), ("stuck", self.loop_periods.count(1))] if looped else []

    def _changes(self, corrected: RecordIndex | None) -> array[int] | list[int]:
        """Steps the teacher changed, per row (a file of corrections says it itself)."""
        if self.kind == "corrections":
            return self.changed
        if corrected is None:
            return [0] * len(self)
        return [_changed_steps(corrected, item) for item in self.item_ids]

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
        kind = _kind_of(value, self.kind)
        if kind is None:
            expected = f"a record like those before it ({self.kind})" if self.kind else (
                "an Episode, a Correction or a PrivilegedState record")  # fmt: skip
            raise UsageError(
                f"{self.path} line {number}: not {expected} — view shows files of episodes,"
                " corrections or privileged state"
            )
        self.kind = kind
        item_id = value["item_id"]
        self.offsets.append(offset)
        self.lengths.append(length)
        self.item_ids.append(item_id)
        self.categories.append(self._category(item_id))
        steps = value.get("steps") or ()
        self.steps.append(len(steps))
        self.success.append(value.get("success") is True)
        reward = value.get("reward")
        self.rewards.append(float(reward) if isinstance(reward, int | float) else 0.0)
        meta = value.get("meta")
        reason = meta.get("end_reason") if isinstance(meta, dict) else None
        self.end_reasons.append(reason if isinstance(reason, str) else None)
        self.loop_periods.append(_loop_period(reason, steps) if kind == "episodes" else 0)
        if kind == "corrections":
            changed = [step.get("t", -1) for step in steps
                       if isinstance(step, dict) and step.get("is_corrected")]  # fmt: skip
            self.changed.append(len(changed))
            self.first_change.append(min(changed, default=-1))
        else:
            self.changed.append(0)
            self.first_change.append(-1)


def _kind_of(value: Any, expected: Kind | None) -> Kind | None:
    """Which record ``value`` is; None when it is none, or not the ``expected`` one."""
    if not isinstance(value, dict) or not isinstance(value.get("item_id"), str):
        return None
    if expected is not None:
        return expected if _KIND_KEYS[expected] <= value.keys() else None
    return next((kind for kind, keys in _KIND_KEYS.items() if keys <= value.keys()), None)


def _loop_period(end_reason: Any, steps: Any) -> int:
    """``evaluate.loop_period`` of a record's steps, 0 for none."""
    if end_reason != END_MAX_ROUNDS:  # no loop, and no list of its steps to build
        return 0
    moves = [(step.get("observation"), step.get("action"))
             for step in steps if isinstance(step, dict)]  # fmt: skip
    return loop_period(end_reason, moves) or 0


def _changed_steps(corrections: RecordIndex, item_id: str) -> int:
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


class Categories:
    """An item's task category (sciworld task, alfworld type, babyai level) where its env is
    built in and has categories, as eval's per-category metrics name it; each env looked up
    once."""

    def __init__(self) -> None:
        self._of_env: dict[str, Callable[[int], str] | None] = {}

    def __call__(self, item_id: str) -> str | None:
        env, _, index = item_id.rpartition("_")
        if not index.isdigit():
            return None
        if env not in self._of_env:
            from agentcli.envs.registry import SPECS

            spec = SPECS.get(env)
            self._of_env[env] = None if spec is None else spec.categories
        categorise = self._of_env[env]
        if categorise is None:
            return None
        try:
            return categorise(int(index))
        except AgentGymError:  # an index the env does not have (an imported file's): none
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
