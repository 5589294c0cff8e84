"""The decode loop against Hugging Face ``generate``, on the tiny random model."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from agentcli import compat
from agentcli.policy.decode import DECODE_ATTENTION, decode, use_decode_attention

MAX_NEW_TOKENS = 12


@pytest.fixture(scope="module")
def model_and_batch(tiny_model):
    """The model, on the decode attention, and a left-padded batch of prompts of different
    lengths."""
    tokenizer = AutoTokenizer.from_pretrained(tiny_model, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(tiny_model).eval()
    use_decode_attention(model)
    assert compat.attention_implementation(model) == DECODE_ATTENTION
    prompts = ["Goal: craft stick." + " Inventory: oak planks." * count for count in range(4)]
    batch = tokenizer(prompts, padding=True, return_tensors="pt")
    return model, tokenizer, batch


def run(model, tokenizer, batch, *, ends_turn=None, eos=None, **kwargs):
    width = batch["input_ids"].shape[1]
    cache = compat.preallocated_cache(model.config.num_hidden_layers, width + MAX_NEW_TOKENS)
    with torch.inference_mode():
        return decode(
            model,
            batch["input_ids"],
            batch["attention_mask"],
            cache,
            max_new_tokens=MAX_NEW_TOKENS,
            eos_token_id=tokenizer.eos_token_id if eos is None else eos,
            pad_token_id=tokenizer.pad_token_id,
            ends_turn=ends_turn or (lambda tokens: torch.zeros(len(tokens), dtype=torch.bool)),
            **kwargs,
        )


def test_greedy_decoding_chooses_the_tokens_generate_does(tiny_model, model_and_batch):
    model, tokenizer, batch = model_and_batch
    on_sdpa = AutoModelForCausalLM.from_pretrained(tiny_model).eval()
    assert compat.attention_implementation(on_sdpa) == "sdpa"
    with torch.inference_mode():
        expected = on_sdpa.generate(
            **batch,
            max_new_tokens=MAX_NEW_TOKENS,
            do_sample=False,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )[:, batch["input_ids"].shape[1] :]
    decoded = run(model, tokenizer, batch)
    assert decoded.tokens.tolist() == expected.tolist()
    assert decoded.lengths == [MAX_NEW_TOKENS] * len(expected)
    assert len({tuple(row) for row in expected.tolist()}) > 1  # the rows really differ


def test_a_row_stops_at_the_end_token_and_the_others_go_on(model_and_batch):
    model, tokenizer, batch = model_and_batch
    free = run(model, tokenizer, batch).tokens.tolist()
    end_token = free[0][3]  # row 0's fourth token, taken as the end token
    stopped = run(model, tokenizer, batch, eos=end_token)
    expected = [row.index(end_token) + 1 if end_token in row else MAX_NEW_TOKENS for row in free]
    assert stopped.lengths == expected
    assert expected[0] <= 4 and MAX_NEW_TOKENS in expected
    for row, length in enumerate(expected):
        assert stopped.tokens[row, :length].tolist() == free[row][:length]
        assert set(stopped.tokens[row, length:].tolist()) <= {tokenizer.pad_token_id}


def test_decoding_ends_once_every_row_has_ended_its_turn(model_and_batch):
    model, tokenizer, batch = model_and_batch
    rows = batch["input_ids"].shape[0]

    def row_r_ends_after_r_plus_1_tokens(tokens):
        return torch.arange(rows) == tokens.shape[1] - 1

    decoded = run(model, tokenizer, batch, ends_turn=row_r_ends_after_r_plus_1_tokens)
    assert decoded.lengths == list(range(1, rows + 1))
    assert decoded.tokens.shape == (rows, rows)  # no step past the last row's end


def test_each_row_samples_from_its_own_generator_whichever_rows_share_its_batch(
    model_and_batch,
):
    model, tokenizer, batch = model_and_batch
    rows = batch["input_ids"].shape[0]

    def sample(seeds, order):
        reordered = {name: tensor[order] for name, tensor in batch.items()}
        generators = [torch.Generator().manual_seed(seeds[row]) for row in order]
        tokens = run(model, tokenizer, reordered, temperature=1.0, generators=generators).tokens
        return {row: tokens[at].tolist() for at, row in enumerate(order)}

    forward, backward = list(range(rows)), list(reversed(range(rows)))
    seeds = [11, 12, 13, 14]
    assert sample(seeds, forward) == sample(seeds, backward)  # each row its own draws
    other = sample([11, 99, 13, 14], forward)
    assert other[0] == sample(seeds, forward)[0] and other[1] != sample(seeds, forward)[1]
