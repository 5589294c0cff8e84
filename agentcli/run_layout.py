"""Where each stage of a run reads and writes: one place, so stages and ``iterate`` agree.

``runs/<name>/`` holds one run per seed (``seed_run``: ``runs/<name>/seed<N>/``, whose files
``RunLayout`` places): the seeds of one config side by side, reported together. A run holds the
demos shared by every iteration, then one folder per iteration.
Iteration k's ``model`` is rolled out (``rollout``) and corrected (``correction``); those
corrections, with the demos and earlier corrections, make iteration k+1's ``data``.

``iterate`` gives each environment a layout of its own (``env``: ``runs/<name>/<env>/``) for
what is per environment (demos, rollouts, corrections, its training set, eval), and keeps at
the run's root what the environments share: the mixed training set, the models, the manifest.
``control`` holds iteration k's matched control: the control of iteration k-1 (model 0 for
iteration 1) trained on as many states of the expert's own episodes as iteration k has
corrected states of the student's. ``variant`` holds
an alternative to iteration k's model (``iterate``'s ``variants``): trained from where
iteration k starts by other settings, in ``iter<k>/variants/<name>/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_ITERATION = re.compile(r"iter(?P<k>[0-9]+)")
_CONTROL = re.compile(r"control(?P<k>[2-9]|[1-9][0-9]+)?")
_SEED = re.compile(r"seed(?P<seed>[0-9]+)")
MANIFEST_NAME = "manifest.json"
CONTROL = "control"  # iteration 1's matched control: its label in reports, and its folder


def control_label(k: int) -> str:
    """Iteration k's matched control, as reports name it and its folder is called:
    ``control`` (iteration 1, as before later iterations had controls), ``control2``, ..."""
    return CONTROL if k == 1 else f"{CONTROL}{k}"


def control_stage(stage: str) -> str:
    """A control's ``stage`` as an iteration's plan and the run's manifest name it
    (``control-train``); every iteration's control alike, the key holding ``iter<k>/``."""
    return f"{CONTROL}-{stage}"


def is_control_stage(name: str) -> bool:
    """Whether a stage name (without its ``iter<k>/`` and ``/<env>``) is a control's."""
    return name.startswith(control_stage(""))


def control_iteration(label: str) -> int | None:
    """The iteration whose matched control ``label`` names (``control``: 1, ``control2``: 2);
    None for any other model's label."""
    found = _CONTROL.fullmatch(label)
    return None if found is None else int(found["k"] or 1)


def seed_run(run: Path, seed: int) -> Path:
    """Where seed ``seed``'s run of the config whose ``run`` is ``run`` lives."""
    return run / f"seed{seed}"


def seeds_of(run: Path) -> list[int]:
    """The seeds whose runs ``run`` holds (each a ``seed<N>`` folder with a manifest), in order."""
    if not run.is_dir():
        return []
    found = (_SEED.fullmatch(child.name) for child in run.iterdir())
    return sorted(
        int(match["seed"])
        for match in found
        if match and (seed_run(run, int(match["seed"])) / MANIFEST_NAME).is_file()
    )


@dataclass(frozen=True)
class RunLayout:
    root: Path

    @property
    def demos(self) -> Path:
        return self.root / "demos.jsonl"

    @property
    def annotated_demos(self) -> Path:
        return self.root / "demos.annotated.jsonl"

    @property
    def privileged_state(self) -> Path:
        return self.root / "privileged_state.jsonl"

    @property
    def student(self) -> Path:
        """The model iteration 0 starts from, when the run builds it (a tiny model)."""
        return self.root / "student"

    def iteration(self, k: int) -> Path:
        return self.root / f"iter{k}"

    @classmethod
    def of_rollout(cls, rollout: Path) -> tuple[RunLayout, int] | None:
        """The run (or environment's part of one) and the iteration k whose ``rollout(k)``
        ``rollout`` is (the folder or its ``episodes.jsonl``); None for a rollout kept anywhere
        else. The one place that reads a run's structure back from a path."""
        folder = rollout.parent if rollout.suffix == ".jsonl" else rollout
        iteration = _ITERATION.fullmatch(folder.parent.name)
        if folder.name != "rollout" or iteration is None:
            return None
        return cls(folder.parent.parent), int(iteration["k"])

    def rollout(self, k: int) -> Path:
        """Episodes of iteration k's model on training items."""
        return self.iteration(k) / "rollout" / "episodes.jsonl"

    def corrections(self, k: int) -> Path:
        """The teacher's corrections of ``rollout(k)``."""
        return self.iteration(k) / "correction" / "corrections.jsonl"

    def data(self, k: int) -> Path:
        """Training sets of iteration k (``bc.json``, ``sft.jsonl``, ``dpo.jsonl``)."""
        return self.iteration(k) / "data"

    def model(self, k: int) -> Path:
        return self.iteration(k) / "model"

    def eval(self, k: int) -> Path:
        return self.iteration(k) / "eval"

    @property
    def manifest(self) -> Path:
        """``iterate``'s record of every stage: status, config, inputs, outputs, timings."""
        return self.root / MANIFEST_NAME

    @property
    def lock(self) -> Path:
        """Held by the ``iterate`` working on the run, so that a second one stops at once."""
        return self.root / ".lock"

    def env(self, name: str) -> RunLayout:
        """Environment ``name``'s part of a run."""
        return RunLayout(self.root / name)

    def variant(self, k: int, name: str) -> Path:
        return self.iteration(k) / "variants" / name

    def variant_data(self, k: int, name: str) -> Path:
        return self.variant(k, name) / "data"

    def variant_model(self, k: int, name: str) -> Path:
        return self.variant(k, name) / "model"

    def variant_eval(self, k: int, name: str) -> Path:
        """In an environment's part of the run: the variant's eval on the iteration's items."""
        return self.variant(k, name) / "eval"

    def control(self, k: int) -> Path:
        """Iteration k's matched control: ``control/`` for iteration 1 (where runs made before
        later iterations had controls keep it), ``control<k>/`` for a later one."""
        return self.root / control_label(k)

    def control_demos(self, k: int) -> Path:
        """The expert's episodes on the items model k-1 was rolled out on."""
        return self.control(k) / "demos.jsonl"

    def control_annotated_demos(self, k: int) -> Path:
        return self.control(k) / "demos.annotated.jsonl"

    def control_data(self, k: int) -> Path:
        return self.control(k) / "data"

    def control_model(self, k: int) -> Path:
        return self.control(k) / "model"

    def control_eval(self, k: int) -> Path:
        return self.control(k) / "eval"
