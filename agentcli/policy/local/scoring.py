"""How likely a model finds each token of several continuations of a prompt, for many prompts
at once.

Choosing among the actions an env lists (``policy.actions: ranked`` or ``constrained``) asks,
at every turn of every episode, for the log-probability of each token of each listed action's
reply after the prompt: ranked sums them, constrained decodes greedily along them. The batch's
prompts go through the model once, left-padded; each continuation then reads its prompt's keys
and values (its row of the batch's cache, gathered), and the continuations of all prompts are
scored together, right-padded, ``chunk`` rows at a time (an ALFWorld room lists forty actions
or more, so a batch of 32 turns holds over a thousand).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentcli import compat


def continuation_token_log_probs(
    model: Any,
    prompts: Sequence[Sequence[int]],
    continuations: Sequence[Sequence[Sequence[int]]],
    *,
    pad_token_id: int,
    chunk: int,
) -> list[list[list[float]]]:
    """For each prompt, for each of its continuations, the log-probability of each of the
    continuation's tokens after the prompt and the tokens before it. Every prompt and
    continuation holds at least one token."""
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
        scores: list[list[float]] = []
        for start in range(0, len(rows), chunk):
            part = rows[start : start + chunk]
            owners = [p for p, _ in part]
            scores += _token_log_probs(
                model, cache, seen, owners, [c for _, c in part], first_log_probs
            )
    per_prompt, taken = [], 0
    for candidates in continuations:
        per_prompt.append(scores[taken : taken + len(candidates)])
        taken += len(candidates)
    return per_prompt


def _token_log_probs(
    model: Any,
    cache: Any,
    seen: Any,
    owners: list[int],
    rows: list[Sequence[int]],
    first_log_probs: Any,
) -> list[list[float]]:
    """The token log-probabilities of ``rows``, each a continuation of the prompt at row
    ``owners[i]`` of the prompts' ``cache`` (``seen``: which of its positions each prompt
    holds)."""
    import torch

    device = model.device
    width = max(len(row) for row in rows)
    tokens = torch.zeros((len(rows), width), dtype=torch.long, device=device)
    valid = torch.zeros((len(rows), width), dtype=torch.bool, device=device)
    for index, row in enumerate(rows):
        tokens[index, : len(row)] = torch.tensor(row, device=device)
        valid[index, : len(row)] = True
    owner = torch.tensor(owners, device=device)
    first = first_log_probs[owner, tokens[:, 0]]
    if width == 1:
        return [[score] for score in first.tolist()]
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
    each = torch.cat([first[:, None], following], dim=1).tolist()
    return [row_scores[: len(row)] for row_scores, row in zip(each, rows, strict=True)]


def likeliest(rows: Sequence[Sequence[int]], log_probs: Sequence[Sequence[float]]) -> int:
    """The row whose tokens are likeliest together (their log-probabilities summed); the first
    of those that tie. (``rows`` goes unread: it takes what ``greedy_along`` takes.)"""
    totals = [sum(scores) for scores in log_probs]
    return totals.index(max(totals))


def greedy_along(rows: Sequence[Sequence[int]], log_probs: Sequence[Sequence[float]]) -> int:
    """The row that greedy decoding writes when it may only write one of ``rows``: at each
    position, of the rows that agree with what is written so far, those whose next token is
    likeliest; the first of the rows left when one of them ends."""
    alive, position = list(range(len(rows))), 0
    while len(alive) > 1:
        ended = [row for row in alive if len(rows[row]) == position]
        if ended:
            return ended[0]
        best = max(alive, key=lambda row: log_probs[row][position])
        alive = [row for row in alive if rows[row][position] == rows[best][position]]
        position += 1
    return alive[0]
