"""Scoring continuations of one prompt over its shared cache gives what the model gives each
whole sequence, one forward apiece."""

from __future__ import annotations

import pytest
from transformers import AutoModelForCausalLM

from agentcli.policy.decode import use_decode_attention
from agentcli.policy.local.scoring import continuation_log_likelihoods
from tests.support.log_likelihood import whole_sequence_log_likelihood

PROMPT = [5, 17, 42, 99, 7, 3, 250, 12]
CONTINUATIONS = [[8], [8, 9], [300, 301, 302, 303, 304], [8, 9, 10], [77, 1, 1, 1, 1, 1, 1]]


@pytest.fixture(scope="module")
def model(tiny_model):
    return AutoModelForCausalLM.from_pretrained(tiny_model).eval()


@pytest.mark.parametrize("chunk", [1, 2, 32])
def test_each_continuation_scores_as_its_whole_sequence_does(model, chunk):
    scores = continuation_log_likelihoods(model, PROMPT, CONTINUATIONS, chunk=chunk)
    expected = [whole_sequence_log_likelihood(model, PROMPT, c) for c in CONTINUATIONS]
    assert scores == pytest.approx(expected, abs=1e-4)
    assert len(set(round(score, 3) for score in scores)) == len(scores)  # they differ


def test_the_decode_attention_scores_as_sdpa_does(tiny_model, model):
    """The local policy's model runs our one-token-query attention: a two-token continuation's
    second token goes through it."""
    decoding = AutoModelForCausalLM.from_pretrained(tiny_model).eval()
    use_decode_attention(decoding)
    assert continuation_log_likelihoods(decoding, PROMPT, CONTINUATIONS, chunk=3) == pytest.approx(
        continuation_log_likelihoods(model, PROMPT, CONTINUATIONS, chunk=3), abs=1e-4
    )
