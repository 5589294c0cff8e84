"""A batch's shared prefix, computed once, gives the loss and gradients of the unshared batch."""

from __future__ import annotations

import torch
from transformers import AutoModelForCausalLM, MistralConfig, MistralForCausalLM

from agentcli.train.sft import trained_positions_loss
from agentcli.train.shared_prefix import (
    MIN_SHARED_TOKENS,
    PREFIX_KEY,
    SharedPrefixCollator,
    model_blocker,
    shared_prefix_length,
)


def right_padded(rows: list[list[int]], trained_from: list[int], pad: int = 0) -> dict:
    """A batch as TRL's collator makes it: right padding, labels -100 before ``trained_from``."""
    longest = max(len(row) for row in rows)
    input_ids = torch.full((len(rows), longest), pad)
    attention_mask = torch.zeros_like(input_ids)
    labels = torch.full_like(input_ids, -100)
    for index, (row, start) in enumerate(zip(rows, trained_from, strict=True)):
        input_ids[index, : len(row)] = torch.tensor(row)
        attention_mask[index, : len(row)] = 1
        labels[index, start : len(row)] = torch.tensor(row[start:])
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


def test_the_prefix_ends_where_rows_differ_or_a_prediction_is_trained():
    opening = list(range(10, 50))
    differ = right_padded([opening + [1, 2, 3], opening + [4, 5]], trained_from=[41, 41])
    assert shared_prefix_length(differ) == 40
    # Token 31 is trained in the second row: position 30 predicts it, so it stays outside.
    trained_early = right_padded([opening + [1], opening + [2]], trained_from=[41, 31])
    assert shared_prefix_length(trained_early) == 30
    # The same tokens after the end of a row are padding, not a common prefix.
    padded = right_padded([opening[:20], opening], trained_from=[19, 39], pad=opening[25])
    assert shared_prefix_length(padded) == 18


def test_the_collator_marks_only_batches_worth_sharing():
    def collate(examples):
        return right_padded([e["input_ids"] for e in examples], [e["start"] for e in examples])

    collator = SharedPrefixCollator(collate)
    opening = list(range(100, 100 + MIN_SHARED_TOKENS))
    first, second = opening + [1, 2], opening + [3, 4]
    start = MIN_SHARED_TOKENS + 1
    marked = collator([{"input_ids": first, "start": start}, {"input_ids": second, "start": start}])
    assert marked[PREFIX_KEY] == MIN_SHARED_TOKENS
    shorter = [{"input_ids": row[1:], "start": start - 1} for row in (first, second)]
    assert PREFIX_KEY not in collator(shorter)
    assert PREFIX_KEY not in collator([{"input_ids": first, "start": start}])  # one row


def test_loss_and_every_gradient_equal_the_unshared_batch(tiny_model):
    model = AutoModelForCausalLM.from_pretrained(tiny_model, dtype=torch.float32)
    model.train()
    generator = torch.Generator().manual_seed(0)
    opening = torch.randint(5, model.config.vocab_size, (40,), generator=generator).tolist()
    rows = [
        opening + torch.randint(5, model.config.vocab_size, (n,), generator=generator).tolist()
        for n in (30, 17, 25, 12)
    ]
    # The first row trains the token right after the prefix, predicted from its first position;
    # the last row trains nothing.
    batch = right_padded(rows, trained_from=[41, 45, 50, 52])
    length = shared_prefix_length(batch)
    assert length == 40

    results = []
    for inputs in (batch, {**batch, PREFIX_KEY: length}):
        model.zero_grad()
        loss = trained_positions_loss(model, inputs, None)
        loss.backward()
        results.append((loss.detach(), {n: p.grad.clone() for n, p in model.named_parameters()}))
    (unshared, unshared_grads), (shared, shared_grads) = results

    torch.testing.assert_close(shared, unshared, rtol=1e-5, atol=1e-6)
    for name, gradient in unshared_grads.items():
        torch.testing.assert_close(shared_grads[name], gradient, rtol=1e-4, atol=1e-6, msg=name)


def test_models_whose_cache_is_not_plain_full_attention_do_not_share(tiny_model):
    assert model_blocker(AutoModelForCausalLM.from_pretrained(tiny_model)) is None
    sliding = MistralConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        sliding_window=16,
    )
    assert "DynamicSlidingWindowLayer" in model_blocker(MistralForCausalLM(sliding))
