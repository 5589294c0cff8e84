"""The token prefix every row of a batch shares, run through the model once instead of per row.

Every AgentGym conversation of an environment opens the same way: the environment's
instruction, then the untrained acknowledgement (40 % of the tokens in textcraft demos). The
collator measures how many leading tokens all rows of a batch have in common before anything
is trained; the loss then runs those tokens through the model once (batch 1) into a
``DynamicCache``, and runs each row's remainder on its own, attending to the prefix's keys and
values (positions continue after the prefix). A row stops at its last trained prediction, so
no position is spent on padding or on a conversation's final, untrained observation. Autograd
sums every row's gradient into the one prefix computation, so the loss and gradients are
those of the unshared batch up to float rounding, at the cost of the prefix once per batch
instead of once per row.

It applies to decoders whose cache is plain full-attention key/value layers. It is off, with
a log line saying why, for padding-free batches (one row: nothing to share), gradient
checkpointing (transformers turns the cache off under it), distributed runs (not tried under
DDP/FSDP/DeepSpeed wrappers, which expect one forward per backward), and models with sliding-
window, chunked, linear-attention or other cache layers, or that do not fill the cache.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentcli import compat

MIN_SHARED_TOKENS = 32  # shorter openings save too little for a second forward (not tuned)
PREFIX_KEY = "shared_prefix_length"  # what the collator adds to a batch it found worth sharing


def shared_prefix_length(batch: dict[str, Any]) -> int:
    """Leading tokens that every row of a right-padded batch has (padding excluded), with no
    trained prediction among them.

    Position t predicts token t + 1, so a prefix of n tokens is safe to share when no row trains
    tokens 1..n: then every trained prediction comes from a position after the prefix. At least
    one position stays outside it.
    """
    import torch

    input_ids = batch["input_ids"]
    untrained = (batch["labels"] == -100).all(dim=0)
    common = (input_ids == input_ids[:1]).all(dim=0) & batch["attention_mask"].bool().all(dim=0)
    common &= torch.cat([untrained[1:], untrained.new_zeros(1)])  # token t + 1 untrained
    length = int(common.int().cumprod(dim=0).sum())
    return min(length, input_ids.shape[1] - 1)


class SharedPrefixCollator:
    """TRL's collator, plus ``shared_prefix_length`` in the batches where sharing pays."""

    def __init__(self, collate: Callable[[list[dict[str, Any]]], dict[str, Any]]) -> None:
        self.collate = collate

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        batch = self.collate(examples)
        if len(examples) > 1:
            length = shared_prefix_length(batch)
            if length >= MIN_SHARED_TOKENS:
                batch[PREFIX_KEY] = length
        return batch


def sharing_blocker(
    model: Any, *, padding_free: bool, checkpointing: bool, distributed: bool
) -> str | None:
    """Why batches cannot share their prefix in this run, or None when they can."""
    if padding_free:
        return "padding-free batches are one row"
    if checkpointing:
        return "gradient checkpointing turns the cache off"
    if distributed:
        return "not tried under distributed wrappers, which expect one forward per backward"
    return model_blocker(model)


def model_blocker(model: Any) -> str | None:
    """Why ``model`` cannot share a prefix through its cache, or None when it can.

    A model qualifies when the ``DynamicCache`` built from its config holds only full-attention
    layers and one forward with it fills the cache (a model that ignored the cache would
    silently drop the prefix from every row's attention).
    """
    import torch

    config = model.config
    if config.is_encoder_decoder:
        return "an encoder-decoder model"
    cache = compat.growing_cache(config=config)
    kinds = compat.unusual_layers(cache)
    if kinds:
        return f"its cache has {', '.join(sorted(kinds))} layers (sliding window or similar)"
    probe = torch.zeros(1, 1, dtype=torch.long, device=model.device)
    with torch.no_grad():
        compat.forward_into(model, cache, input_ids=probe, logits_to_keep=1)
    if compat.cached_length(cache) != 1:
        return "its forward does not fill a DynamicCache"
    return None


def shared_prefix_logits(model: Any, inputs: dict[str, Any], keep: Any, length: int) -> Any:
    """The logits at the ``keep`` positions (in (row, position) order, as a boolean
    ``logits_to_keep`` gives them), computing the first ``length`` tokens once for all rows.

    ``inputs`` is a right-padded batch (``input_ids``, optionally ``position_ids``) whose rows
    agree on those tokens and keep nothing among them. Each row's remainder then runs on its
    own, up to its last kept position, attending to the prefix: no position is spent on
    padding, nor on a row's tokens after its last trained prediction (length-grouped batches
    of 4 textcraft demos padded a quarter of the positions after their prefix).
    """
    import torch

    input_ids = inputs["input_ids"]
    prefix = compat.growing_cache(config=model.config)
    nothing = torch.zeros(1, length, dtype=torch.bool, device=input_ids.device)
    compat.forward_into(model, prefix, input_ids=input_ids[:1, :length], logits_to_keep=nothing)
    shared = compat.layer_tensors(prefix)
    logits = []
    for row, row_keep in enumerate(keep[:, length:]):
        kept = row_keep.nonzero()
        if not len(kept):
            continue
        end = length + int(kept.max()) + 1
        rest = {"input_ids": input_ids[row : row + 1, length:end]}
        if "position_ids" in inputs:
            rest["position_ids"] = inputs["position_ids"][row : row + 1, length:end]
        cache = compat.growing_cache(model.config, holding=shared)  # its own: rows append to it
        output = compat.forward_into(
            model, cache, **rest, logits_to_keep=keep[row : row + 1, length:end]
        )
        logits.append(output.logits)
    return torch.cat(logits)
