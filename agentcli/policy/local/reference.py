"""A batch's replies from transformers' own ``model.generate``: the reference that our decode
loop (``agentcli.policy.decode``) must match, and a fallback should a transformers release
break what that loop relies on (``agentcli.compat``).

No cache is kept between turns: each batch is encoded whole. The stopping rule is the loop's
(the end token, or ``ends_turn``), and so is the sampling: plain temperature, no top-k or
top-p whatever the model's generation config says, seeded per batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentcli.policy.decode import Decoded

if TYPE_CHECKING:
    import torch


def generate(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    *,
    max_new_tokens: int,
    eos_token_id: int,
    pad_token_id: int,
    ends_turn: Callable[[torch.Tensor], torch.Tensor],
    temperature: float = 0.0,
    seed: int = 0,
) -> Decoded:
    """Continues the left-padded rows of ``input_ids`` as ``decode.decode`` does (the same
    arguments, but a ``seed`` for sampling rather than a generator: ``generate`` draws from
    torch's global generator, forked here so that nobody else's draws move)."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    width = input_ids.shape[1]
    rows = input_ids.shape[0]
    # How many tokens each row generated, its stopping token included; rows still going at
    # the end generated them all.
    lengths: list[int | None] = [None] * rows

    class EndsTurn(StoppingCriteria):
        def __call__(self, sequences: torch.Tensor, scores: Any, **kwargs: Any) -> torch.Tensor:
            generated = sequences[:, width:]
            stops = (generated[:, -1] == eos_token_id) | ends_turn(generated)
            for row in stops.nonzero().flatten().tolist():
                if lengths[row] is None:
                    lengths[row] = generated.shape[1]
            return stops

    # Sampling settings only when sampling: generate warns of any set for greedy decoding.
    sampling = {"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0}
    devices = [model.device] if model.device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        output = model.generate(
            input_ids=input_ids,
            attention_mask=attention_mask,
            max_new_tokens=max_new_tokens,
            **(sampling if temperature > 0 else {"do_sample": False}),
            num_beams=1,
            eos_token_id=eos_token_id,
            pad_token_id=pad_token_id,
            stopping_criteria=StoppingCriteriaList([EndsTurn()]),
        )
    tokens = output[:, width:]
    return Decoded(tokens, [tokens.shape[1] if n is None else n for n in lengths])
