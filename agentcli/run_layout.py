"""Where each stage of a run reads and writes: one place, so stages and ``iterate`` agree.

``runs/<name>/`` holds the demos shared by every iteration, then one folder per iteration.
Iteration k's ``model`` is rolled out (``rollout``) and corrected (``correction``); those
corrections, with the demos and earlier corrections, make iteration k+1's ``data``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


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

    def iteration(self, k: int) -> Path:
        return self.root / f"iter{k}"

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
