"""Scoring the continuations of a batch of prompts over the prompts' shared cache gives what
the model gives each whole sequence, one forward apiece."""

from __future__ import annotations

import pytest
from transformers import AutoModelForCausalLM

from agentcli.policy.decode import use_decode_attention
from agentcli.policy.local.scoring import continuation_token_log_probs, greedy_along, likeliest
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
    """Each continuation's log-likelihood: its tokens' log-probabilities summed."""
    per_token = continuation_token_log_probs(
        model, PROMPTS, CONTINUATIONS, pad_token_id=PAD, chunk=chunk
    )
    for rows, candidates in zip(per_token, CONTINUATIONS, strict=True):
        assert [len(row) for row in rows] == [len(c) for c in candidates]  # one per token
    return [[sum(row) for row in rows] for rows in per_token]


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


# Three replies: two share their first token, which the model finds likelier than the third's
# first token; of the two, the second's next token is the likelier. Summed, the third is the
# likeliest (one sure token); decoding greedily, the model never writes its first token.
ROWS = [[1, 2, 9], [1, 3, 9], [4, 9]]
LOG_PROBS = [[-0.5, -2.0, -0.1], [-0.5, -1.0, -0.1], [-0.9, -0.1]]


def test_likeliest_sums_each_reply_s_tokens():
    assert likeliest(ROWS, LOG_PROBS) == 2
    assert likeliest(ROWS[:2], LOG_PROBS[:2]) == 1
    assert likeliest([[1], [1]], [[-1.0], [-1.0]]) == 0  # a tie: the first listed


def test_greedy_along_takes_the_likeliest_next_token_among_the_replies_that_agree_so_far():
    assert greedy_along(ROWS, LOG_PROBS) == 1
    assert greedy_along([[1, 2], [1, 2, 3]], [[-0.1, -0.1], [-0.1, -0.1, -0.1]]) == 0  # one ends
    assert greedy_along([[5, 6], [5, 6]], [[-1.0, -1.0], [-1.0, -1.0]]) == 0  # the same twice
    assert greedy_along([[7]], [[-3.0]]) == 0
