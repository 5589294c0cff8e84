"""The reference for scored continuations: one forward of the whole sequence, no cache."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch


def whole_sequence_log_likelihood(
    model: Any, prompt: Sequence[int], continuation: Sequence[int]
) -> float:
    """log p(continuation | prompt) from one forward of prompt and continuation together."""
    with torch.inference_mode():
        logits = model(torch.tensor([[*prompt, *continuation]])).logits[0].float()
    log_probs = torch.log_softmax(logits, dim=-1)
    positions = range(len(prompt) - 1, len(prompt) + len(continuation) - 1)
    return sum(log_probs[p, t].item() for p, t in zip(positions, continuation, strict=True))
