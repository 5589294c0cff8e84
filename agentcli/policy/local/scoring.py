"""How likely a model finds each of several continuations of one prompt.

Ranking the actions an env lists (``policy.actions: ranked``) asks, at every turn, for
log p(reply | prompt) of each listed action's reply. The prompt goes through the model once;
its keys and values are then shared by every continuation, which are scored together, right-
padded, ``chunk`` at a time (an ALFWorld room lists forty actions or more).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentcli import compat


def continuation_log_likelihoods(
    model: Any, prompt: Sequence[int], continuations: Sequence[Sequence[int]], *, chunk: int
) -> list[float]:
    """log p(continuation | prompt) of each continuation: its tokens' log-probabilities
    summed. ``prompt`` and every continuation hold at least one token."""
    import torch

    device = model.device
    with torch.inference_mode():
        prompt_cache = compat.growing_cache(config=model.config)
        last = compat.last_logits(
            model, prompt_cache, input_ids=torch.tensor([prompt], device=device)
        )
        first_log_probs = torch.log_softmax(last[0].float(), dim=-1)
        shared = compat.layer_tensors(prompt_cache)
        scores: list[float] = []
        for start in range(0, len(continuations), chunk):
            rows = continuations[start : start + chunk]
            scores += _scored_chunk(model, shared, len(prompt), rows, first_log_probs)
    return scores


def _scored_chunk(
    model: Any,
    shared: compat.KeysValues,
    prompt_length: int,
    rows: Sequence[Sequence[int]],
    first_log_probs: Any,
) -> list[float]:
    """The scores of ``rows``, each read after the prompt whose keys and values are ``shared``."""
    import torch

    device = model.device
    width = max(len(row) for row in rows)
    tokens = torch.zeros((len(rows), width), dtype=torch.long, device=device)
    valid = torch.zeros((len(rows), width), dtype=torch.bool, device=device)
    for index, row in enumerate(rows):
        tokens[index, : len(row)] = torch.tensor(row, device=device)
        valid[index, : len(row)] = True
    scores = first_log_probs[tokens[:, 0]]
    if width > 1:
        # the rows share the prompt's tensors (expanded, not copied): the forward appends to
        # each layer a tensor of its own
        cache = compat.growing_cache(
            holding=[
                (keys.expand(len(rows), -1, -1, -1), values.expand(len(rows), -1, -1, -1))
                for keys, values in shared
            ]
        )
        seen = torch.ones((len(rows), prompt_length), dtype=torch.long, device=device)
        mask = torch.cat([seen, valid.long()], dim=1)
        inputs = {"input_ids": tokens[:, :-1], "attention_mask": mask[:, :-1]}
        logits = compat.forward_into(model, cache, **inputs).logits.float()
        log_probs = torch.log_softmax(logits, dim=-1)
        following = log_probs.gather(-1, tokens[:, 1:, None])[..., 0]
        scores = scores + (following * valid[:, 1:]).sum(dim=1)
    return scores.tolist()
