"""What ``agentgym view PATH`` shows: PATH read as a run, an eval or rollout folder, or one
JSONL file, and the files of records found in it ("datasets"), each with what belongs beside
it: a rollout's corrections, a correction file's rollout, the env's privileged state.

Where files lie in a run is ``RunLayout``'s to say; this module only asks it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentcli.errors import UsageError
from agentcli.iterate.run_layout import RunLayout, seed_run, seeds_of

SourceKind = Literal["run", "folder", "file"]
CONTROL = "control"
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
    iteration: str | None = None  # "0", "1", … or "control"; None outside a run
    corrections: Path | None = None  # episodes: the teacher's corrections of them
    episodes: Path | None = None  # corrections: the episodes they correct
    privileged: Path | None = None  # the env's privileged state, where the run has it
    metrics: Path | None = None  # eval: metrics.json beside the episodes


@dataclass(frozen=True)
class Source:
    path: Path
    kind: SourceKind
    datasets: tuple[Dataset, ...]
    manifest: Path | None = None  # a run of `agentgym iterate`: its report can be read

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
        return Source(path, "file", (_file_dataset(path),))
    layout = RunLayout(path)
    if layout.manifest.exists():
        return Source(path, "run", _run_datasets(layout), manifest=layout.manifest)
    if (path / EPISODES_FILE).is_file():
        return Source(path, "folder", (_file_dataset(path / EPISODES_FILE, root=path),))
    if layout.demos.exists() or layout.iteration(0).is_dir():  # a run made stage by stage
        return Source(path, "run", _layout_datasets(layout, env=None, root=path, iterations=None))
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


def _run_datasets(layout: RunLayout) -> tuple[Dataset, ...]:
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
            layout.env(env), env=env, root=layout.root, iterations=iterations
        )  # fmt: skip
    ]
    # iteration by iteration, the control after iteration 1 (as the report lists them); the
    # files of one iteration and env in the order they were made
    order = {dataset.id: position for position, dataset in enumerate(found)}
    return tuple(sorted(found, key=lambda d: (_iteration_position(d.iteration), order[d.id])))


def _layout_datasets(
    layout: RunLayout, *, env: str | None, root: Path, iterations: list[int] | None
) -> list[Dataset]:
    """The files of ``layout`` (one env's part of a run, or a whole run made by hand) that
    exist; ``iterations`` None: every iter<k> folder there is, from 0 on."""
    if iterations is None:
        iterations = []
        while layout.iteration(len(iterations)).is_dir():
            iterations.append(len(iterations))
    privileged = layout.privileged_state if layout.privileged_state.exists() else None
    found: list[Dataset] = []

    def add(path: Path, label: str, role: str, iteration: str, **links: Path | None) -> None:
        if path.is_file():
            found.append(Dataset(
                id=path.relative_to(root).as_posix(), path=path, label=label, role=role,
                env=env, iteration=iteration, privileged=privileged,
                **{name: link for name, link in links.items() if link and link.is_file()},
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
    add(layout.control_demos, "the expert on model 0's rollout items", "control demos", CONTROL)
    add(layout.control_annotated_demos, "the expert on model 0's rollout items, annotated",
        "control annotated demos", CONTROL)  # fmt: skip
    control_eval = layout.control_eval / EPISODES_FILE
    add(control_eval, "the control on held-out items", "eval", CONTROL,
        metrics=layout.control_eval / "metrics.json")  # fmt: skip
    return found


def _iteration_position(label: str | None) -> float:
    return 1.5 if label == CONTROL else int(label or 0)


def _file_dataset(path: Path, root: Path | None = None) -> Dataset:
    """A file given alone: its corrections, rollout and privileged state when it lies in a
    run, as ``RunLayout`` places them."""
    if path.suffix != ".jsonl":
        raise UsageError(f"{path} is not a .jsonl file; {_NOT_A_SOURCE}")
    dataset_id = path.name if root is None else path.relative_to(root).as_posix()
    metrics = path.parent / "metrics.json"
    if "summary" in _first_record_keys(path):  # a Correction: its rollout lies beside it in a run
        beside = path.parent.parent / "rollout" / EPISODES_FILE
        placed = RunLayout.of_rollout(beside)
        if placed is not None and placed[0].corrections(placed[1]) == path:
            layout = placed[0]
            return Dataset(dataset_id, path, "the teacher's corrections", "corrections",
                           episodes=beside if beside.is_file() else None,
                           privileged=_existing(layout.privileged_state))  # fmt: skip
        return Dataset(dataset_id, path, "the teacher's corrections", "corrections")
    placed = RunLayout.of_rollout(path)
    if placed is not None:
        layout, k = placed
        return Dataset(dataset_id, path, f"model {k} on training items", "rollout",
                       iteration=str(k), corrections=_existing(layout.corrections(k)),
                       privileged=_existing(layout.privileged_state))  # fmt: skip
    shown = path if root is None else root  # as the user gave it: a folder says what it is
    return Dataset(dataset_id, path, str(shown), "episodes",
                   metrics=metrics if metrics.is_file() else None)  # fmt: skip


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


def _existing(path: Path) -> Path | None:
    return path if path.is_file() else None
