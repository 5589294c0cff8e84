"""What ``agentgym view PATH`` shows: PATH read as a run, an eval or rollout folder, or one
JSONL file, and the files of records found in it ("datasets"), each with what belongs beside
it: a rollout's corrections, a correction file's rollout, the env's privileged state.

Where files lie in a run is ``RunLayout``'s to say; this module only asks it. Nothing outside
the folder PATH names (for a file: the run or folder it lies in) is ever read: a file found
there that resolves outside it (a symbolic link out) is left out of the source, named in
``outside`` and in a warning, so that the server answers 404 for it and the export skips it.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentcli.errors import UsageError
from agentcli.run_layout import RunLayout, control_iteration, control_label, seed_run, seeds_of

log = logging.getLogger("agentgym.view")

SourceKind = Literal["run", "folder", "file"]
EPISODES_FILE = "episodes.jsonl"  # what rollout and eval write into their folder
_NOT_A_SOURCE = (
    "give a run directory (runs/<name>), an eval or rollout directory (holding episodes.jsonl),"
    " or a JSONL file of episodes or corrections"
)


@dataclass(frozen=True)
class Dataset:
    """One JSONL file of episodes or corrections, and its neighbours."""

    id: str  # its path relative to the source, "/"-separated: stable across restarts
    path: Path
    label: str  # what it is, in words: "model 0 on held-out items"
    role: str  # demos, annotated demos, rollout, corrections, eval, control demos, ...
    env: str | None = None
    iteration: str | None = None  # "0", "1", …, "control", "1:dpo"; None outside a run
    corrections: Path | None = None  # episodes: the teacher's corrections of them
    episodes: Path | None = None  # corrections: the episodes they correct
    privileged: Path | None = None  # the env's privileged state, where the run has it
    metrics: Path | None = None  # eval: metrics.json beside the episodes


class Root:
    """What a source may read: the files under ``folder`` that lie there once resolved."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.resolved = folder.resolve()
        self.outside: list[Path] = []

    def file(self, path: Path) -> Path | None:
        """``path`` when it is a file inside the root; None when it is none, or resolves outside
        (then noted in ``outside``, and warned of once)."""
        if not path.is_file():
            return None
        if not self.inside(path):
            if path not in self.outside:
                log.warning("%s: left out, it links outside %s", path, self.folder)
                self.outside.append(path)
            return None
        return path

    def inside(self, path: Path) -> bool:
        return path.resolve().is_relative_to(self.resolved)

    def source(self, path: Path, kind: SourceKind, datasets: list[Dataset]) -> Source:
        manifest = self.file(RunLayout(path).manifest) if kind == "run" else None
        return Source(path, kind, tuple(datasets), self, manifest)


@dataclass(frozen=True)
class Source:
    path: Path
    kind: SourceKind
    datasets: tuple[Dataset, ...]
    root: Root  # what it may read
    manifest: Path | None = None  # a run of `agentgym iterate`: its report can be read

    @property
    def outside(self) -> tuple[Path, ...]:
        """The files found that resolve outside the root: never read."""
        return tuple(self.root.outside)

    def dataset(self, dataset_id: str) -> Dataset:
        for dataset in self.datasets:
            if dataset.id == dataset_id:
                return dataset
        raise UsageError(f"{self.path} has no dataset {dataset_id!r}")

    def of_path(self, path: Path) -> Dataset | None:
        return next((d for d in self.datasets if d.path == path), None)


def open_source(path: Path) -> Source:
    """PATH as view shows it; a one-line error when it is none of the kinds view reads."""
    if not path.exists():
        raise UsageError(f"{path}: no such file or directory; {_NOT_A_SOURCE}")
    if path.is_file():
        dataset, within = _file_dataset(path)
        return within.source(path, "file", [dataset])
    within = Root(path)
    layout = RunLayout(path)
    if within.file(layout.manifest):
        return within.source(path, "run", _run_datasets(layout, within))
    if (path / EPISODES_FILE).is_file():
        if not within.inside(path / EPISODES_FILE):  # found, not named: it must lie inside
            raise UsageError(
                f"{path / EPISODES_FILE} links outside {path}: view reads nothing outside the"
                " folder it is given"
            )
        dataset, around = _file_dataset(path / EPISODES_FILE, label=str(path))
        return around.source(path, "folder", [dataset])
    if layout.demos.exists() or layout.iteration(0).is_dir():  # a run made stage by stage
        datasets = _layout_datasets(layout, env=None, within=within, iterations=None)
        return within.source(path, "run", datasets)
    seeds = seeds_of(path)
    if seeds:
        raise UsageError(
            f"{path} holds the runs of seeds {', '.join(map(str, seeds))}: view one of them,"
            f" e.g. agentgym view {seed_run(path, seeds[0])}"
        )
    raise UsageError(
        f"{path} is neither a run (no manifest.json) nor an eval or rollout directory (no"
        f" {EPISODES_FILE}): give one of those, or a JSONL file of episodes or corrections"
    )


def _run_datasets(layout: RunLayout, within: Root) -> list[Dataset]:
    from agentcli.iterate.runner import Manifest

    manifest = Manifest(layout.manifest)
    iterations = sorted(int(key) for key in manifest.iterations)
    envs = dict.fromkeys(
        env for record in manifest.iterations.values() for env in record["config"]["envs"]
    )
    found = [
        dataset
        for env in envs
        for dataset in _layout_datasets(
            layout.env(env), env=env, within=within, iterations=iterations
        )  # fmt: skip
    ]
    # iteration by iteration, each control after its iteration (as the report lists them); the
    # files of one iteration and env in the order they were made
    order = {dataset.id: position for position, dataset in enumerate(found)}
    return sorted(found, key=lambda d: (_iteration_position(d.iteration), order[d.id]))


def _layout_datasets(
    layout: RunLayout, *, env: str | None, within: Root, iterations: list[int] | None
) -> list[Dataset]:
    """The files of ``layout`` (one env's part of a run, or a whole run made by hand) that
    exist; ``iterations`` None: every iter<k> folder there is, from 0 on."""
    if iterations is None:
        iterations = []
        while layout.iteration(len(iterations)).is_dir():
            iterations.append(len(iterations))
    privileged = within.file(layout.privileged_state)
    found: list[Dataset] = []

    def add(path: Path, label: str, role: str, iteration: str, **links: Path) -> None:
        if within.file(path):
            found.append(Dataset(
                id=path.relative_to(within.folder).as_posix(), path=path, label=label, role=role,
                env=env, iteration=iteration, privileged=privileged,
                **{name: link for name, link in links.items() if within.file(link)},
            ))  # fmt: skip

    add(layout.demos, "the expert's demos", "demos", "0")
    add(layout.annotated_demos, "the expert's demos, annotated", "annotated demos", "0")
    for k in iterations:
        rollout, corrections = layout.rollout(k), layout.corrections(k)
        add(rollout, f"model {k} on training items", "rollout", str(k), corrections=corrections)
        add(corrections, f"the teacher's corrections of model {k}", "corrections", str(k),
            episodes=rollout)  # fmt: skip
        evaluated = layout.eval(k) / EPISODES_FILE
        add(evaluated, f"model {k} on held-out items", "eval", str(k),
            metrics=layout.eval(k) / "metrics.json")  # fmt: skip
        variants = layout.iteration(k) / "variants"  # a variant's folders are made by its stages
        for name in sorted(f.name for f in variants.iterdir()) if variants.is_dir() else []:
            evaluated = layout.variant_eval(k, name)
            add(evaluated / EPISODES_FILE, f"model {k} {name} on held-out items", "eval",
                f"{k}:{name}", metrics=evaluated / "metrics.json")  # fmt: skip
    folders = layout.root.iterdir() if layout.root.is_dir() else ()
    controls = (control_iteration(folder.name) for folder in folders if folder.is_dir())
    for k in sorted(k for k in controls if k is not None):  # the matched controls made
        control, items = control_label(k), f"model {k - 1}'s rollout items"
        add(layout.control_demos(k), f"the expert on {items}", "control demos", control)
        add(layout.control_annotated_demos(k), f"the expert on {items}, annotated",
            "control annotated demos", control)  # fmt: skip
        evaluated = layout.control_eval(k)
        add(evaluated / EPISODES_FILE, f"the {control} on held-out items", "eval", control,
            metrics=evaluated / "metrics.json")  # fmt: skip
    return found


def _iteration_position(label: str | None) -> float:
    """Where a model's files come in a run's list: its iteration's, then its control's, then
    a variant's (``1:dpo``)."""
    if (k := control_iteration(label or "")) is not None:
        return k + 0.5
    k, variant, _ = (label or "0").partition(":")
    return int(k) + (0.7 if variant else 0)


def _file_dataset(path: Path, label: str | None = None) -> tuple[Dataset, Root]:
    """A file and its neighbours, which must lie in the run that holds it, else in its folder
    (the ``Root`` returned): its corrections, rollout and privileged state when it lies in
    a run, as ``RunLayout`` places them. ``label``: what it was given as (a folder)."""
    if path.suffix != ".jsonl":
        raise UsageError(f"{path} is not a .jsonl file; {_NOT_A_SOURCE}")
    if "summary" in _first_record_keys(path):  # a Correction: its rollout lies beside it in a run
        beside = path.parent.parent / "rollout" / EPISODES_FILE
        placed = RunLayout.of_rollout(beside)
        if placed is not None and placed[0].corrections(placed[1]) == path:
            within = Root(placed[0].root)
            return Dataset(path.name, path, "the teacher's corrections", "corrections",
                           episodes=within.file(beside),
                           privileged=within.file(placed[0].privileged_state)), within  # fmt: skip
        within = Root(path.parent)
        return Dataset(path.name, path, "the teacher's corrections", "corrections"), within
    placed = RunLayout.of_rollout(path)
    if placed is not None:
        layout, k = placed
        within = Root(layout.root)
        return Dataset(path.name, path, f"model {k} on training items", "rollout",
                       iteration=str(k), corrections=within.file(layout.corrections(k)),
                       privileged=within.file(layout.privileged_state)), within  # fmt: skip
    within = Root(path.parent)
    return Dataset(path.name, path, label or str(path), "episodes",
                   metrics=within.file(path.parent / "metrics.json")), within  # fmt: skip


def _first_record_keys(path: Path) -> set[str]:
    """The keys of the file's first record (none for an empty file)."""
    with path.open("rb") as file:
        for line in file:
            if line.strip():
                try:
                    value = json.loads(line)
                except ValueError:
                    break
                return set(value) if isinstance(value, dict) else set()
    return set()
