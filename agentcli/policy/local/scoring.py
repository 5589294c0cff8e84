"""How likely a model finds each of several continuations of a prompt, for many prompts at once.

Ranking the actions an env lists (``policy.actions: ranked``) asks, at every turn of every
episode, for log p(reply | prompt) of each listed action's reply. The batch's prompts go
through the model once, left-padded; each continuation then reads its prompt's keys and values
(its row of the batch's cache, gathered), and the continuations of all prompts are scored
together, right-padded, ``chunk`` rows at a time (an ALFWorld room lists forty actions or more,
so a batch of 32 turns holds over a thousand).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentcli import compat


def continuation_log_likelihoods(
    model: Any,
    prompts: Sequence[Sequence[int]],
    continuations: Sequence[Sequence[Sequence[int]]],
    *,
    pad_token_id: int,
    chunk: int,
) -> list[list[float]]:
    """For each prompt, log p(continuation | prompt) of each of its continuations: the sum of
    the log-probabilities of the continuation's tokens. Every prompt and continuation holds
    at least one token."""
    import torch

    device = model.device
    width = max(len(prompt) for prompt in prompts)
    pads = [width - len(prompt) for prompt in prompts]
    input_ids = torch.tensor(
        [[pad_token_id] * pad + list(prompt) for pad, prompt in zip(pads, prompts, strict=True)],
        device=device,
    )
    seen = (torch.arange(width, device=device) >= torch.tensor(pads, device=device)[:, None]).long()
    # As ``generate`` numbers them: from 0 at each row's first real token.
    positions = (seen.cumsum(-1) - 1).masked_fill(seen == 0, 0)
    with torch.inference_mode():
        cache = compat.growing_cache(config=model.config)
        last = compat.last_logits(
            model, cache, input_ids=input_ids, attention_mask=seen, position_ids=positions
        )
        first_log_probs = torch.log_softmax(last.float(), dim=-1)
        rows = [(p, c) for p, candidates in enumerate(continuations) for c in candidates]
        scores: list[float] = []
        for start in range(0, len(rows), chunk):
            part = rows[start : start + chunk]
            owners = [p for p, _ in part]
            scores += _scored(model, cache, seen, owners, [c for _, c in part], first_log_probs)
    ranked, taken = [], 0
    for candidates in continuations:
        ranked.append(scores[taken : taken + len(candidates)])
        taken += len(candidates)
    return ranked


def _scored(
    model: Any,
    cache: Any,
    seen: Any,
    owners: list[int],
    rows: list[Sequence[int]],
    first_log_probs: Any,
) -> list[float]:
    """The scores of ``rows``, each a continuation of the prompt at row ``owners[i]`` of the
    prompts' ``cache`` (``seen``: which of its positions each prompt holds)."""
    import torch

    device = model.device
    width = max(len(row) for row in rows)
    tokens = torch.zeros((len(rows), width), dtype=torch.long, device=device)
    valid = torch.zeros((len(rows), width), dtype=torch.bool, device=device)
    for index, row in enumerate(rows):
        tokens[index, : len(row)] = torch.tensor(row, device=device)
        valid[index, : len(row)] = True
    owner = torch.tensor(owners, device=device)
    scores = first_log_probs[owner, tokens[:, 0]]
    if width == 1:
        return scores.tolist()
    # each row reads its prompt's keys and values; the forward appends its own after them
    gathered = compat.growing_cache(
        holding=[(keys[owner], values[owner]) for keys, values in compat.layer_tensors(cache)]
    )
    prompt_seen = seen[owner]
    mask = torch.cat([prompt_seen, valid[:, :-1].long()], dim=1)
    positions = prompt_seen.sum(-1, keepdim=True) + torch.arange(width - 1, device=device)
    inputs = {"input_ids": tokens[:, :-1], "attention_mask": mask, "position_ids": positions}
    logits = compat.forward_into(model, gathered, **inputs).logits.float()
    following = torch.log_softmax(logits, dim=-1).gather(-1, tokens[:, 1:, None])[..., 0]
    return (scores + (following * valid[:, 1:]).sum(dim=1)).tolist()
