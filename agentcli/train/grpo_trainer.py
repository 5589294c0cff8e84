"""TRL's ``GRPOTrainer`` as ``train grpo`` runs it: a run resumed from a checkpoint plays the
items in the order an uninterrupted run plays them.

TRL's ``RepeatSampler`` draws each epoch's order from one generator seeded once, when the
trainer is built; a resumed run builds a new one, so an epoch it starts in draws the first
epoch's order again (transformers skips the batches already trained within an epoch, but
cannot know the epoch's order changed). ``EpochOrder`` draws epoch e's order afresh from the
seed, as the e-th draw, whichever epoch the run starts in; transformers tells the sampler its
epoch (``set_epoch``) before each.
"""

from __future__ import annotations

from collections.abc import Iterator

from torch.utils.data import Sampler
from trl import GRPOTrainer

from agentcli import compat


class EpochOrder(Sampler[int]):
    """``sampler``'s indices (TRL's ``RepeatSampler``), epoch e in the order its seed's e-th
    draw gives (see the module)."""

    def __init__(self, sampler: Sampler[int]) -> None:
        self.sampler = sampler
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return len(self.sampler)

    def __iter__(self) -> Iterator[int]:
        compat.rewind_repeat_sampler(self.sampler, self.epoch)
        return iter(self.sampler)


class ResumableGRPOTrainer(compat.with_train_sampler(GRPOTrainer, EpochOrder)):
    """``GRPOTrainer`` whose epochs keep their order across a resume (see the module)."""
