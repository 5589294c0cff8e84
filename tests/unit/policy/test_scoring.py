"""Scoring the continuations of a batch of prompts over the prompts' shared cache gives what
the model gives each whole sequence, one forward apiece."""

from __future__ import annotations

import pytest
from transformers import AutoModelForCausalLM

from agentcli.policy.decode import use_decode_attention
from agentcli.policy.local.scoring import continuation_log_likelihoods
from tests.support.log_likelihood import whole_sequence_log_likelihood

PROMPTS = [[5, 17, 42, 99, 7, 3, 250, 12], [61, 2], [9, 9, 9, 9, 40]]  # left-padded to 8
CONTINUATIONS = [
    [[8], [8, 9], [300, 301, 302, 303, 304], [8, 9, 10]],
    [[77, 1, 1, 1, 1, 1, 1], [8, 9]],
    [[4]],  # one token: read off the prompt's last position alone
]
PAD = 0


@pytest.fixture(scope="module")
def model(tiny_model):
    return AutoModelForCausalLM.from_pretrained(tiny_model).eval()


def scores(model, chunk: int) -> list[list[float]]:
    return continuation_log_likelihoods(
        model, PROMPTS, CONTINUATIONS, pad_token_id=PAD, chunk=chunk
    )


@pytest.mark.parametrize("chunk", [1, 3, 128])
def test_each_continuation_scores_as_its_whole_sequence_does(model, chunk):
    expected = [
        [whole_sequence_log_likelihood(model, prompt, c) for c in candidates]
        for prompt, candidates in zip(PROMPTS, CONTINUATIONS, strict=True)
    ]
    got = scores(model, chunk)
    assert [len(row) for row in got] == [len(row) for row in CONTINUATIONS]
    for row, want in zip(got, expected, strict=True):
        assert row == pytest.approx(want, abs=1e-4)
    flat = [round(score, 3) for row in got for score in row]
    assert len(set(flat)) == len(flat)  # they differ


def test_the_decode_attention_scores_as_sdpa_does(tiny_model, model):
    """The local policy's model runs our one-token-query attention: a two-token continuation's
    second token goes through it."""
    decoding = AutoModelForCausalLM.from_pretrained(tiny_model).eval()
    use_decode_attention(decoding)
    for mine, theirs in zip(scores(decoding, 2), scores(model, 2), strict=True):
        assert mine == pytest.approx(theirs, abs=1e-4)
