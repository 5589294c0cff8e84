"""What each page of ``agentgym view`` shows, as JSON-able data: the server answers with it and
the static export writes it into files, so both show the same thing.

- the overview: a run's report (success ± its standard error per iteration, env and the
  control, the paired differences) and every file of episodes or corrections found;
- a list page: one page of a file's records that pass the filters, with the filters' choices;
- an episode page: its steps, the teacher's correction of each beside the student's (the
  first step where they disagree marked), the item's privileged state, and the same item in
  the run's other files (did iteration 1 win what iteration 0 lost?).
"""

from __future__ import annotations

import json
import math
import re
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentcli.data.jsonl import first_problem
from agentcli.errors import UsageError
from agentcli.records import Correction, CorrectionStep, Episode
from agentcli.view.index import LOOPS, Filters, Indexes, RecordIndex, Stamp
from agentcli.view.source import Dataset, Source

PAGE_SIZE = 50
_TASK_LINE = re.compile(r"^\s*(your goal|goal|your task|task|instruction)\b", re.IGNORECASE)
_TASK_CHARS = 140  # a list row's task line at most


class View:
    """The pages of one source, over indexes kept up to date with its files."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.indexes = Indexes()
        self._report: tuple[tuple[Stamp | None, ...], dict[str, Any] | None] | None = None
        self._lock = threading.Lock()

    def index(self, dataset: Dataset) -> RecordIndex:
        return self.indexes.get(dataset.path)

    # --- the overview ---------------------------------------------------------------------

    def overview(self) -> dict[str, Any]:
        source = self.source
        return {
            "title": source.path.resolve().name,
            "path": str(source.path),
            "kind": source.kind,
            "report": self.report(),
            "plot": self.plot_path() is not None,
            "datasets": [self.summary(dataset) for dataset in source.datasets],
        }

    def summary(self, dataset: Dataset) -> dict[str, Any]:
        index = self.index(dataset)
        return {
            "id": dataset.id,
            "label": dataset.label,
            "role": dataset.role,
            "env": dataset.env or _only_env(index),
            "iteration": dataset.iteration,
            "path": str(dataset.path),
            "kind": index.kind,
            "count": len(index),
            "successes": sum(index.success) if index.kind == "episodes" else None,
            "corrected": len(index.changed) - index.changed.tolist().count(0)
            if index.kind == "corrections"
            else None,
            "has_corrections": dataset.corrections is not None,
            "metrics": _json_file(dataset.metrics),
        }

    def report(self) -> dict[str, Any] | None:
        """The run's report as ``agentgym report`` reads it, re-read when its files change."""
        if self.source.manifest is None:
            return None
        if self.source.outside:  # it reads the run's files itself, through the run's layout
            return {"rows": [], "comparisons": [], "note": (
                f"no report: {self.source.outside[0]} links outside {self.source.path}, and"
                " view reads nothing outside the run it is given"
            )}  # fmt: skip
        evaluated = [d for d in self.source.datasets if d.metrics is not None]
        files = [
            self.source.manifest,
            *(d.path for d in evaluated),
            *(d.metrics for d in evaluated),
        ]
        stamps = tuple(_stamp(path) for path in files)
        with self._lock:
            if self._report is not None and self._report[0] == stamps:
                return self._report[1]
        report = _read_report(self.source.path)
        with self._lock:
            self._report = (stamps, report)
        return report

    def plot_path(self) -> Path | None:
        from agentcli.iterate.report import PLOT_NAME

        plot = self.source.path / PLOT_NAME
        return self.source.root.file(plot) if self.source.kind == "run" else None

    # --- the list -------------------------------------------------------------------------

    def list_page(self, dataset_id: str, filters: Filters, page: int = 0) -> dict[str, Any]:
        dataset = self.source.dataset(dataset_id)
        index = self.index(dataset)
        corrections = self._corrections_index(dataset)
        rows = index.matching(filters, corrections)
        pages = max(1, math.ceil(len(rows) / PAGE_SIZE))
        page = min(max(page, 0), pages - 1)
        shown = rows[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]
        return {
            "dataset": self.summary(dataset),
            "total": len(rows),
            "page": page,
            "pages": pages,
            "rows": [
                self._row(dataset, index, row, record, corrections)
                for row, record in index.records(shown)
            ],
            "facets": facets(index),
        }

    def all_rows(self, dataset: Dataset) -> list[dict[str, Any]]:
        """Every row of the list (the static export filters them in the page)."""
        index = self.index(dataset)
        corrections = self._corrections_index(dataset)
        return [self._row(dataset, index, row, record, corrections)
                for row, record in index.records(list(range(len(index))))]  # fmt: skip

    def _row(
        self,
        dataset: Dataset,
        index: RecordIndex,
        row: int,
        record: dict[str, Any],
        corrections: RecordIndex | None,
    ) -> dict[str, Any]:
        item = index.item_ids[row]
        shown: dict[str, Any] = {"row": row, "item_id": item, "category": index.categories[row]}
        if index.kind == "privileged":
            return shown | {"task": _first_line(record.get("text", ""))}
        shown |= {"steps": index.steps[row], "task": task_line(record)}
        if index.kind == "corrections":
            episode = self._episode_of_correction(dataset, item)
            return shown | {
                "changed": index.changed[row],
                "first_change": _or_none(index.first_change[row]),
                "summary": record.get("summary", ""),
                "link": episode,
            }
        shown |= {
            "success": bool(index.success[row]),
            "reward": index.rewards[row],
            "end_reason": index.end_reasons[row],
            "loop": index.loop_periods[row] or None,
            "stuck_on": _stuck_on(record) if index.loop_periods[row] == 1 else None,
        }
        if corrections is not None:
            corrected = corrections.row_of(item)
            shown["changed"] = None if corrected is None else corrections.changed[corrected]
            shown["first_change"] = (
                None if corrected is None else _or_none(corrections.first_change[corrected])
            )
        return shown

    # --- one episode ----------------------------------------------------------------------

    def episode_page(self, dataset_id: str, row: int) -> dict[str, Any]:
        dataset = self.source.dataset(dataset_id)
        index = self.index(dataset)
        record = index.record(row)
        page: dict[str, Any] = {
            "dataset": self.summary(dataset),
            "row": row,
            "count": len(index),
            "item_id": index.item_ids[row],
            "category": index.categories[row],
            "raw": {"dataset": dataset.id, "row": row},
            "privileged": self._privileged(dataset, index.item_ids[row]),
        }
        if index.kind == "privileged":
            return page | {"kind": "privileged", "text": record.get("text", "")}
        if index.kind == "corrections":
            correction = _validated(Correction, record, index, row)
            return page | {
                "kind": "corrections",
                "steps": [_corrected_step(step) for step in correction.steps],
                # its raw JSON is the page's own: no second link to it
                "correction": _correction_summary(correction, None, row, None),
                "elsewhere": [],
            }
        episode = _validated(Episode, record, index, row)
        steps = [{"t": t, **step.model_dump()} for t, step in enumerate(episode.steps)]
        for step, earlier in zip(steps, repeated_steps(episode), strict=True):
            step["repeats"] = earlier
        correction = None
        corrections = self._corrections_index(dataset)
        corrected_row = None if corrections is None else corrections.row_of(episode.item_id)
        if corrections is not None and corrected_row is not None:
            record = corrections.record(corrected_row)
            found = _validated(Correction, record, corrections, corrected_row)
            correction = _correction_summary(
                found, self._dataset_id(corrections.path), corrected_row, episode
            )
            for step in found.steps if correction["mismatch"] is None else []:
                steps[step.t]["teacher"] = _teacher(step)
        return page | {
            "kind": "episodes",
            "episode": episode.model_dump(exclude={"steps"}),
            "loop": index.loop_periods[row] or None,
            "steps": steps,
            "correction": correction,
            "elsewhere": self._elsewhere(dataset, episode.item_id, row),
        }

    def raw(self, dataset_id: str, row: int) -> bytes:
        return self.index(self.source.dataset(dataset_id)).raw(row)

    def _elsewhere(self, dataset: Dataset, item_id: str, row: int) -> list[dict[str, Any]]:
        """This item's last episode in each file of episodes of the source, this one among
        them, in the source's order: the same task across iterations, side by side."""
        found = []
        for other in self.source.datasets:
            index = self.index(other)
            if index.kind != "episodes":
                continue
            at = row if other == dataset else index.row_of(item_id)
            if at is None:
                continue
            record = index.record(at)
            found.append({
                "dataset": other.id, "label": other.label, "iteration": other.iteration,
                "role": other.role, "row": at, "current": other == dataset,
                "success": bool(index.success[at]), "reward": index.rewards[at],
                "steps": index.steps[at], "end_reason": index.end_reasons[at],
                "actions": [step.get("action", "") for step in record.get("steps") or []],
            })  # fmt: skip
        return found if len(found) > 1 else []

    def _privileged(self, dataset: Dataset, item_id: str) -> str | None:
        if dataset.privileged is None:
            return None
        index = self.indexes.get(dataset.privileged)
        at = index.row_of(item_id)
        return None if at is None else index.record(at).get("text")

    def _corrections_index(self, dataset: Dataset) -> RecordIndex | None:
        return None if dataset.corrections is None else self.indexes.get(dataset.corrections)

    def _episode_of_correction(self, dataset: Dataset, item_id: str) -> dict[str, Any] | None:
        """Where the corrected episode's page is (the rollout's, with the correction beside
        it), when the source holds that rollout."""
        rollout = None if dataset.episodes is None else self.source.of_path(dataset.episodes)
        if rollout is None:
            return None
        at = self.index(rollout).row_of(item_id)
        return None if at is None else {"dataset": rollout.id, "row": at}

    def _dataset_id(self, path: Path) -> str | None:
        found = self.source.of_path(path)
        return None if found is None else found.id


def facets(index: RecordIndex) -> dict[str, list[tuple[str, int]]]:
    """The values the list's choices offer, with how many records hold each."""
    return {
        "end_reason": index.end_reasons.counts(),
        "loop": index.loop_counts(),
        "category": index.categories.counts(),
    }


def repeated_steps(episode: Episode) -> list[int | None]:
    """For each step, the first earlier step that took the same action in the same state (the
    observation, as the env wrote it), or None: how a loop shows, step by step."""
    first: dict[tuple[str, str], int] = {}
    repeats = []
    for t, step in enumerate(episode.steps):
        move = (step.observation, step.action)
        repeats.append(first.get(move))
        first.setdefault(move, t)
    return repeats


def task_line(record: dict[str, Any]) -> str:
    """One line saying what the task was, for a list row: the first observation's goal line
    (or its first line), else the instruction's."""
    steps = record.get("steps") or []
    first = steps[0] if steps and isinstance(steps[0], dict) else {}
    for text in (first.get("observation"), record.get("instruction")):
        if not isinstance(text, str) or not text.strip():
            continue
        goal = next((line for line in text.splitlines() if _TASK_LINE.match(line)), None)
        return _clip(goal or _first_line(text))
    return ""


def filters_from(query: dict[str, str]) -> Filters:
    """The list's filters from a page's query string (``success=true``, ``q=…``)."""

    def choice(name: str) -> bool | None:
        value = query.get(name, "")
        if value in ("", "any"):
            return None
        if value not in ("true", "false"):
            raise UsageError(f"{name}={value!r}: expected true, false or any")
        return value == "true"

    loop = query.get("loop", "")
    if loop not in ("", "any", *LOOPS):
        raise UsageError(f"loop={loop!r}: expected {', '.join(LOOPS)} or any")
    return Filters(
        success=choice("success"),
        end_reason=query.get("end_reason") or None,
        category=query.get("category") or None,
        item=query.get("item") or None,
        text=query.get("q") or None,
        corrected=choice("corrected"),
        loop=None if loop in ("", "any") else loop,
    )


def _read_report(run: Path) -> dict[str, Any]:
    """The rows and comparisons as ``agentgym report`` writes them into report.json."""
    from agentcli.iterate.report import paired_comparisons, read_report, row_record

    try:
        rows = read_report(run)
    except UsageError as error:  # nothing evaluated yet: the episodes are still worth a look
        return {"rows": [], "comparisons": [], "note": str(error)}
    return {
        "rows": [row_record(row) for row in rows],
        "comparisons": [asdict(comparison) for comparison in paired_comparisons(run, rows)],
        "note": None,
    }


def _correction_summary(
    correction: Correction, dataset_id: str | None, row: int, episode: Episode | None
) -> dict[str, Any]:
    changed = [step.t for step in correction.steps if step.is_corrected]
    return {
        "summary": correction.summary,
        "changed": len(changed),
        "first_change": min(changed, default=None),
        "raw": None if dataset_id is None else {"dataset": dataset_id, "row": row},
        "mismatch": None if episode is None else _mismatch(correction, episode),
    }


def _mismatch(correction: Correction, episode: Episode) -> str | None:
    """Why the correction cannot be of this episode, if it cannot (the item was rolled out
    again after it was corrected): the steps are then not shown side by side as if it were."""
    for step in correction.steps:
        if step.t >= len(episode.steps):
            return f"the correction has a step {step.t}; the episode has {len(episode.steps)}"
        if step.observation != episode.steps[step.t].observation:
            return f"the correction's step {step.t} shows another observation than the episode's"
    return None


def _corrected_step(step: CorrectionStep) -> dict[str, Any]:
    """A step of a correction shown alone: the student's side is what the correction copied
    from the rollout."""
    return {
        "t": step.t,
        "observation": step.observation,
        "reason": step.original_reason,
        "action": step.original_action,
        "teacher": _teacher(step),
    }


def _teacher(step: CorrectionStep) -> dict[str, Any]:
    return {
        "reason": step.corrected_reason,
        "action": step.corrected_action,
        "differs": step.is_corrected,
    }


def _validated(model: Any, record: dict[str, Any], index: RecordIndex, row: int) -> Any:
    try:
        return model.model_validate(record)
    except ValidationError as error:
        raise UsageError(
            f"{index.path} record {row} ({index.item_ids[row]}): not a valid {model.__name__}"
            f" ({first_problem(error)}) — fix that line"
        ) from None


def _only_env(index: RecordIndex) -> str | None:
    envs = {item.rsplit("_", 1)[0] for item in index.item_ids[:100]}
    return envs.pop() if len(envs) == 1 else None


def _json_file(path: Path | None) -> Any:
    return None if path is None or not path.is_file() else json.loads(path.read_text())


def _stamp(path: Path) -> Stamp | None:
    return Stamp.of(path) if path.exists() else None


def _first_line(text: str) -> str:
    return _clip(next((line for line in text.splitlines() if line.strip()), ""))


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _TASK_CHARS else text[: _TASK_CHARS - 1] + "…"


def _stuck_on(record: dict[str, Any]) -> str:
    """The action a stuck episode repeats: its last."""
    return str(record["steps"][-1].get("action", ""))


def _or_none(value: int) -> int | None:
    return None if value < 0 else value
