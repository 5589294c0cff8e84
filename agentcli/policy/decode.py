"""A batch's replies, one token per model forward, over a cache preallocated for the turn.

Hugging Face ``generate`` surrounds every forward with bookkeeping that costs as much as the
forward itself for a small model at batch 32 on a CPU: it re-prepares the model's inputs,
rebuilds the attention mask from a 2D mask grown by one column a step, runs logits processors
and stopping criteria, and updates its keyword arguments. This loop does only what a turn
needs: one forward a token, the mask kept as one boolean row per sequence that gains a column
a step, and stopping decided with tensor ops. Greedy, it chooses exactly the tokens that
``generate`` does; sampling, each row draws from its own seeded generator, so that a row's
tokens do not depend on the rows beside it.

A decoding step's attention reads every row's whole cache, a query of one token against
hundreds of keys; ``use_decode_attention`` has the model compute it with two matrix products
rather than SDPA's kernel, which is built for long queries (about a tenth of a step saved at
batch 32 on a CPU; prompts still go through SDPA).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentcli import compat

if TYPE_CHECKING:
    import torch

DECODE_ATTENTION = "agentgym_decode"


@dataclass
class Decoded:
    tokens: torch.Tensor  # [rows, steps]: each row's new tokens, the pad token after it stopped
    lengths: list[int]  # how many of them each row generated, its stopping token included


def decode(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    cache: Any,
    *,
    max_new_tokens: int,
    eos_token_id: int,
    pad_token_id: int,
    ends_turn: Callable[[torch.Tensor], torch.Tensor],
    temperature: float = 0.0,
    generators: Sequence[torch.Generator] | None = None,
) -> Decoded:
    """Continues the left-padded rows of ``input_ids`` (``attention_mask`` 0 on the padding)
    until each row generates ``eos_token_id``, ``ends_turn`` says its turn is over, or it has
    ``max_new_tokens`` tokens.

    ``cache`` holds the keys and values of the first ``compat.cached_length(cache)``
    positions and has room for ``max_new_tokens`` more past the prompt (a
    ``compat.preallocated_cache``): the first forward encodes the rest of the prompt.
    ``ends_turn`` gets the tokens generated so far, ``[rows, steps]``, and says which rows'
    newest token ends their turn. Sampling (``temperature`` > 0), row r draws from
    ``generators[r]`` (None: torch's global generator, the batch's rows in turn).
    """
    import torch

    rows, width = input_ids.shape
    start = compat.cached_length(cache)
    # As ``generate`` numbers them: from 0 at each row's first real token.
    positions = (attention_mask.cumsum(-1) - 1).masked_fill(attention_mask == 0, 0)
    logits = compat.last_logits(
        model,
        cache,
        input_ids=input_ids[:, start:],
        attention_mask=attention_mask,
        position_ids=positions[:, start:],
    )
    # Which cached positions each row attends to: its prompt, then a column more per token.
    # Positions past the newest are still empty in the preallocated cache and stay hidden.
    visible = torch.zeros(rows, width + max_new_tokens, dtype=torch.bool, device=input_ids.device)
    visible[:, :width] = attention_mask.bool()
    next_positions = positions[:, -1:] + 1
    tokens = torch.full((rows, max_new_tokens), pad_token_id, device=input_ids.device)
    done = torch.zeros(rows, dtype=torch.bool, device=input_ids.device)
    lengths = torch.full((rows,), max_new_tokens, device=input_ids.device)
    for step in range(max_new_tokens):
        chosen = _choose(logits.float(), temperature, generators)
        tokens[:, step] = chosen.masked_fill(done, pad_token_id)
        stops = ~done & ((chosen == eos_token_id) | ends_turn(tokens[:, : step + 1]))
        lengths.masked_fill_(stops, step + 1)
        done |= stops
        if step + 1 == max_new_tokens or bool(done.all()):
            tokens = tokens[:, : step + 1]
            break
        visible[:, width + step] = True
        logits = compat.last_logits(
            model,
            cache,
            input_ids=tokens[:, step : step + 1],
            attention_mask=compat.prepared_mask(visible),
            position_ids=next_positions + step,
        )
    return Decoded(tokens, lengths.tolist())


def _choose(
    logits: torch.Tensor, temperature: float, generators: Sequence[torch.Generator] | None
) -> torch.Tensor:
    import torch

    if temperature == 0:
        return logits.argmax(dim=-1)
    probabilities = torch.softmax(logits / temperature, dim=-1)
    if generators is None:
        return torch.multinomial(probabilities, num_samples=1).squeeze(1)
    return torch.cat(
        [
            torch.multinomial(row, num_samples=1, generator=generator)
            for row, generator in zip(probabilities, generators, strict=True)
        ]
    )


def use_decode_attention(model: Any) -> None:
    """Has ``model`` compute a one-token query's attention as ``_decode_attention`` does, if
    it uses SDPA (a model on other kernels keeps them)."""
    if compat.attention_implementation(model) == "sdpa":
        compat.use_attention_function(model, DECODE_ATTENTION, _decode_attention)


def _decode_attention(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """Attention (the ``AttentionInterface`` signature) of a one-token query over a masked
    cache, by matrix products; anything else goes to SDPA.

    ``query`` is ``[batch, heads, 1, dim]``, ``key`` and ``value`` ``[batch, key heads,
    positions, dim]`` (several query heads may share a key head), ``attention_mask`` a
    boolean ``[batch, 1, 1, positions]``.
    """
    import torch

    if query.shape[2] != 1 or attention_mask is None or attention_mask.dtype != torch.bool:
        return compat.sdpa_attention(
            module, query, key, value, attention_mask, scaling=scaling, **kwargs
        )
    batch, heads, _, dim = query.shape
    key_heads = key.shape[1]
    # Query heads grouped by the key head they share: [batch, key heads, group, dim].
    grouped = query.reshape(batch, key_heads, heads // key_heads, dim)
    # Scaled before the product: the query is smaller than the scores.
    scores = torch.matmul(grouped * (dim**-0.5 if scaling is None else scaling), key.mT)
    scores.masked_fill_(~attention_mask, float("-inf"))
    weights = scores.softmax(dim=-1, dtype=torch.float32).to(value.dtype)
    output = torch.matmul(weights, value)  # [batch, key heads, group, dim]
    return output.reshape(batch, 1, heads, dim), None
