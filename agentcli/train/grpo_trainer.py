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
from typing import Any

import torch
from torch.utils.data import Sampler
from trl import GRPOTrainer
from trl.trainer.utils import RepeatSampler


class EpochOrder(Sampler[int]):
    """``sampler``'s indices, epoch e in the order its seed's e-th draw gives (see the module)."""

    def __init__(self, sampler: RepeatSampler) -> None:
        self.sampler = sampler
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return len(self.sampler)

    def __iter__(self) -> Iterator[int]:
        sampler = self.sampler
        if sampler.shuffle:
            sampler.generator.manual_seed(sampler.seed)
            for _ in range(self.epoch):  # the draws of the epochs before
                torch.randperm(sampler.num_samples, generator=sampler.generator)
        return iter(sampler)


class ResumableGRPOTrainer(GRPOTrainer):
    def _get_train_sampler(self, dataset: Any = None) -> Sampler:
        return EpochOrder(super()._get_train_sampler(dataset))
