"""JSONL files of records: appended a line at a time, read back safely after a crash.

A writer killed mid-record leaves a last line without its newline. Reading drops such a torn
line with a warning (its record was never finished, so the stage redoes it); appending first
cuts it off, so the next record starts on a line of its own. Any other bad line is an error
naming the file and line: that is damage to look at, not the trace of a crash.

One process writes a file at a time (in distributed runs, rank 0): an append first repairs
the file's end, which would cut into a line another process is still writing.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from agentcli.common import write_atomic
from agentcli.errors import UsageError

logger = logging.getLogger(__name__)

RecordT = TypeVar("RecordT", bound=BaseModel)

_TAIL_CHUNK = 1 << 16  # bytes read at a time when looking backwards for the last newline


def append_records(path: Path, records: Iterable[BaseModel], *, fsync: bool = False) -> int:
    """Append one line per record, flushed as it goes; returns how many were written.

    ``fsync`` also forces each line to disk, for records too costly to redo after a power cut.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    repair_tail(path)
    count = 0
    with path.open("ab") as file:  # binary: "\n" stays "\n" on every platform
        for record in records:
            file.write(record.model_dump_json().encode("utf-8") + b"\n")
            file.flush()
            if fsync:
                os.fsync(file.fileno())
            count += 1
    return count


def read_records(path: Path, model: type[RecordT]) -> list[RecordT]:
    """Every record of ``path``, validated as ``model``; a torn last line is dropped."""
    return [record for _, record in numbered_records(path, model)]


def numbered_records(path: Path, model: type[RecordT]) -> list[tuple[int, RecordT]]:
    """``read_records`` with each record's line number, for errors that name it."""
    records = []
    for number, value in _json_lines(path):
        try:
            records.append((number, model.model_validate(value)))
        except ValidationError as error:
            raise UsageError(
                f"{path} line {number}: not a valid {model.__name__} record"
                f" ({first_problem(error)}) — fix or delete that line"
            ) from None
    return records


def done_ids(path: Path) -> set[str]:
    """The item ids already in ``path`` (none when it does not exist yet), for resuming."""
    if not path.exists():
        return set()
    ids = set()
    for number, value in _json_lines(path):
        if not isinstance(value, dict) or not isinstance(value.get("item_id"), str):
            raise UsageError(f"{path} line {number}: the record has no item_id — fix that line")
        ids.add(value["item_id"])
    return ids


def repair_tail(path: Path) -> bool:
    """Make ``path`` end with a whole line; returns whether it had to change the file.

    A last line without its newline is completed when it holds a whole JSON value, and cut
    off otherwise, so that an append never glues a record onto half of another.
    """
    if not path.exists():
        return False
    with path.open("r+b") as file:
        size = file.seek(0, os.SEEK_END)
        if size == 0:
            return False
        file.seek(size - 1)
        if file.read(1) == b"\n":
            return False
        start = _last_line_start(file, size)
        file.seek(start)
        tail = file.read()
        if _parses(tail):
            file.write(b"\n")
        else:
            file.truncate(start)
            logger.warning(
                "%s: cut off an unfinished last line (%d bytes) left by a stopped writer",
                path,
                size - start,
            )
    return True


def write_records(path: Path, records: Iterable[BaseModel]) -> None:
    """Write a whole JSONL file atomically: readers see the old file or the new, never half."""
    write_atomic(path, "".join(record.model_dump_json() + "\n" for record in records))


def _json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for each non-blank line; a torn last line is skipped."""
    with path.open("rb") as file:
        for number, raw in enumerate(file, start=1):  # binary lines split on b"\n" only
            try:
                text = raw.decode("utf-8")
                if not text.strip():
                    continue
                value = json.loads(text)
            except ValueError as error:  # UnicodeDecodeError and JSONDecodeError both
                if not raw.endswith(b"\n"):  # the last line, and unfinished: a killed writer
                    logger.warning(
                        "%s line %d: dropped an unfinished last line (a writer was stopped"
                        " mid-record); that record will be redone",
                        path,
                        number,
                    )
                    return
                raise UsageError(
                    f"{path} line {number}: not valid JSON ({error}) — fix or delete that line"
                ) from None
            yield number, value


def _last_line_start(file: Any, size: int) -> int:
    end = size
    while end > 0:
        start = max(0, end - _TAIL_CHUNK)
        file.seek(start)
        newline = file.read(end - start).rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        end = start
    return 0


def _parses(data: bytes) -> bool:
    try:
        json.loads(data.decode("utf-8"))
    except ValueError:
        return False
    return True


def first_problem(error: ValidationError) -> str:
    """The first thing wrong with a record, by field (``messages.2.role: …``), in one line."""
    problems = error.errors(include_url=False)
    first = problems[0]
    where = ".".join(str(part) for part in first["loc"]) or "record"
    more = f"; and {len(problems) - 1} more" if len(problems) > 1 else ""
    return f"{where}: {first['msg']}{more}"
