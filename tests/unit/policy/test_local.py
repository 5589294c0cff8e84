"""The batched local-model policy, on the tiny random model (its text is noise: compare, never
read it)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
import torch
from transformers import AutoModelForCausalLM

from agentcli.conversation import (
    Opening,
    StudentView,
    chat_dicts,
    cut_after_action,
    student_messages,
)
from agentcli.errors import FatalRunError, ModelUnavailableError
from agentcli.policy import decode, local
from agentcli.policy.local import LocalModelPolicy, batcher
from agentcli.policy.local.kv_cache import common_prefix_length, encodes_apart_after_added_tokens
from agentcli.policy.streams import episode_stream
from agentcli.records import ChatMessage, Step
from tests.support.log_likelihood import whole_sequence_log_likelihood

MAX_NEW_TOKENS = 16


def user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


def assistant(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=text)


def system(text: str) -> ChatMessage:
    return ChatMessage(role="system", content=text)


def conversations(count: int) -> list[list[ChatMessage]]:
    """Prompts of different lengths, so that a batch needs padding."""
    return [
        [
            system("Craft the goal."),
            ChatMessage(
                role="user", content="Goal: craft stick." + " Inventory: oak planks." * index
            ),
        ]
        for index in range(count)
    ]


@pytest.fixture(scope="module")
def policy(tiny_model):
    return LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, batch_size=4)


@pytest.fixture
def generate_calls(monkeypatch):
    """Counts the batches decoded and the size of each."""
    sizes: list[int] = []
    real_decode = decode.decode

    def counting_decode(model, input_ids, *args, **kwargs):
        sizes.append(input_ids.shape[0])
        return real_decode(model, input_ids, *args, **kwargs)

    monkeypatch.setattr(decode, "decode", counting_decode)
    return sizes


def test_a_batch_gives_the_same_greedy_text_as_one_prompt_at_a_time(policy):
    prompts = conversations(6)
    batched = policy.generate(prompts)
    alone = [policy.generate([prompt])[0] for prompt in prompts]
    assert [reply.text for reply in batched] == [reply.text for reply in alone]
    assert [reply.completion_tokens for reply in batched] == [r.completion_tokens for r in alone]
    assert len({reply.text for reply in batched}) > 1  # the prompts really differ
    assert all(reply.prompt_tokens > 0 for reply in batched)
    assert all(0 < reply.completion_tokens <= MAX_NEW_TOKENS for reply in batched)
    assert batched[5].prompt_tokens > batched[0].prompt_tokens


def test_concurrent_acts_share_one_generate_call_per_batch(policy, generate_calls):
    prompts = conversations(10)

    async def act_all():
        return await asyncio.gather(*(policy.act(prompt) for prompt in prompts))

    replies = asyncio.run(act_all())
    assert generate_calls == [4, 4, 2]  # batch_size 4
    assert [reply.text for reply in replies] == [reply.text for reply in policy.generate(prompts)]
    # The policy outlives an event loop: a second asyncio.run gets a fresh batcher.
    again = asyncio.run(act_all())
    assert [reply.text for reply in again] == [reply.text for reply in replies]


def test_turns_that_come_back_late_join_the_others_rather_than_a_batch_of_their_own(
    policy, generate_calls, monkeypatch
):
    monkeypatch.setattr(batcher, "RETURN_WAIT_FRACTION", 100.0)  # wait long for them here
    prompts = conversations(4)

    async def two_rounds():
        await asyncio.gather(*(policy.act(prompt) for prompt in prompts))

        async def come_back(prompt, delay):
            await asyncio.sleep(delay)
            return await policy.act(prompt)

        # One of the four comes back well after the gather window.
        delays = [0, 0, 0, 0.2 + 2 * policy._batcher.last_batch_s]
        await asyncio.gather(*map(come_back, prompts, delays))

    asyncio.run(two_rounds())
    assert generate_calls == [4, 4]


def test_a_prompt_that_cannot_fit_is_refused_without_generating(tiny_model, monkeypatch):
    policy = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, max_context_tokens=64)
    short, long = (
        [user("hi")],
        [user("oak " * 60)],
    )
    fits, too_long = policy.generate([short, long])
    assert too_long.context_exceeded and too_long.text == "" and too_long.completion_tokens == 0
    assert too_long.prompt_tokens + MAX_NEW_TOKENS > 64
    assert not fits.context_exceeded and fits.completion_tokens > 0

    monkeypatch.setattr(decode, "decode", None)  # the refusal must not decode
    assert asyncio.run(policy.act(long)).context_exceeded


def test_a_failed_generate_fails_its_batch_and_not_the_policy(tiny_model, monkeypatch):
    policy = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS)
    real_decode = decode.decode

    def failing_decode(*args, **kwargs):
        raise RuntimeError("out of memory")

    async def two_turns():
        with pytest.raises(RuntimeError, match="out of memory"):
            await policy.act(conversations(1)[0])
        monkeypatch.setattr(decode, "decode", real_decode)
        reply = await policy.act(conversations(1)[0])
        await policy.aclose()
        return reply

    monkeypatch.setattr(decode, "decode", failing_decode)
    assert asyncio.run(two_turns()).completion_tokens > 0


def test_closing_cancels_turns_in_flight_and_queued(tiny_model, monkeypatch):
    policy = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, batch_size=1)
    real_decode = decode.decode

    def slow_decode(*args, **kwargs):
        time.sleep(0.5)
        return real_decode(*args, **kwargs)

    async def close_while_busy():
        turns = [asyncio.create_task(policy.act(prompt)) for prompt in conversations(3)]
        await asyncio.sleep(0.1)  # the first turn is generating, two are queued
        await policy.aclose()
        return await asyncio.gather(*turns, return_exceptions=True)

    monkeypatch.setattr(decode, "decode", slow_decode)
    outcomes = asyncio.run(close_while_busy())
    assert all(isinstance(outcome, asyncio.CancelledError) for outcome in outcomes)


def test_an_episodes_replies_follow_its_seed_and_turns_not_its_place_in_the_batch(tiny_model):
    """Four episodes' two turns each, answered in one batch a turn, asked for in one order and
    in the reverse: each episode samples the same replies (its stream: the seed, its key, its
    turn), where a batch seeded as a whole would hand them to other rows; another key
    samples others. (A batch of other rows may still flip a near-tie: its sums run in
    another order.)"""
    episodes = [(f"textcraft:{index}#0", prompt) for index, prompt in enumerate(conversations(4))]

    def play(episodes) -> dict[str, list[str]]:
        policy = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, temperature=1.0)

        async def episode(key: str, prompt) -> list[str]:
            with episode_stream(key):
                return [(await policy.act(prompt)).text for _ in range(2)]

        async def together():
            replies = await asyncio.gather(*(episode(*one) for one in episodes))
            await policy.aclose()
            return {key: reply for (key, _), reply in zip(episodes, replies, strict=True)}

        return asyncio.run(together())

    forward = play(episodes)
    assert play(episodes[::-1]) == forward
    assert all(first != second for first, second in forward.values())  # a turn, a draw
    renamed = play([("textcraft:0#1", episodes[0][1]), *episodes[1:]])
    assert renamed["textcraft:0#1"] != forward["textcraft:0#0"]


def test_sampling_is_reproducible_for_a_seed(tiny_model):
    prompts = conversations(3)
    first = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, temperature=1.0, seed=7)
    second = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, temperature=1.0, seed=7)
    assert [r.text for r in first.generate(prompts)] == [r.text for r in second.generate(prompts)]


@pytest.mark.parametrize(
    ("generated", "turn"),
    [
        (
            "Thought: I need planks.\nAction: craft 4 oak planks using 1 oak log\nThought: next",
            "Thought: I need planks.\nAction: craft 4 oak planks using 1 oak log",
        ),
        (
            "Thought: hm\nAction:\nget 1 oak log\nAction: inventory\n",
            "Thought: hm\nAction:\nget 1 oak log",
        ),
    ],
    ids=["same-line", "next-line"],
)
def test_generation_stops_at_the_newline_that_ends_the_action(policy, generated, turn):
    token_ids = policy.tokenizer(generated, add_special_tokens=False)["input_ids"]
    flags = [
        bool(policy._ends_action_line(torch.tensor([token_ids[: end + 1]]))[0])
        for end in range(len(token_ids))
    ]
    stopped_at = flags.index(True)
    text = policy.tokenizer.decode(token_ids[: stopped_at + 1])
    assert text.startswith(turn + "\n")
    assert cut_after_action(text) == turn


def test_a_directory_without_a_model_is_a_clear_error(tmp_path):
    with pytest.raises(ModelUnavailableError, match="agentgym model tiny"):
        LocalModelPolicy(tmp_path)
    # Loading in the background too: refused by the constructor, not by the first turn.
    with pytest.raises(ModelUnavailableError, match="agentgym model tiny"):
        LocalModelPolicy(tmp_path, load_in_background=True)


def test_a_model_loaded_in_the_background_answers_as_one_loaded_at_once(tiny_model, monkeypatch):
    loaded_in: list[threading.Thread] = []
    real_load = local._load

    def load(*args):
        loaded_in.append(threading.current_thread())
        return real_load(*args)

    monkeypatch.setattr(local, "_load", load)
    background = LocalModelPolicy(
        tiny_model, max_new_tokens=MAX_NEW_TOKENS, batch_size=4, load_in_background=True
    )

    async def act() -> list:
        replies = await asyncio.gather(*(background.act(turn) for turn in conversations(3)))
        await background.aclose()
        return replies

    replies = asyncio.run(act())
    assert loaded_in[0] is not threading.main_thread()
    at_once = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, batch_size=4)
    assert replies == at_once.generate(conversations(3))


def test_a_load_that_fails_in_the_background_stops_the_run_with_its_error(tiny_model, monkeypatch):
    def load(*args):
        raise ModelUnavailableError("the weights are corrupt")

    monkeypatch.setattr(local, "_load", load)
    policy = LocalModelPolicy(tiny_model, load_in_background=True)
    with pytest.raises(FatalRunError, match="the weights are corrupt"):
        asyncio.run(policy.act(conversations(1)[0]))
    with pytest.raises(FatalRunError, match="the weights are corrupt"):
        policy.generate(conversations(1))


def test_a_later_turn_encodes_only_its_new_tokens_and_answers_as_without_the_cache(tiny_model):
    first_turns = conversations(3)
    policy = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, batch_size=4)
    replies = policy.generate(first_turns)
    encoded_first = policy.prefill_tokens
    second_turns = [
        turn
        + [
            assistant(reply.text),
            user("Ok."),
        ]
        for turn, reply in zip(first_turns, replies, strict=True)
    ]
    with_cache = policy.generate(second_turns)
    encoded_second = policy.prefill_tokens - encoded_first
    fresh = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, batch_size=4)
    without_cache = fresh.generate(second_turns)
    # The kept caches spare all but a few of the first turn's prompt tokens (rows whose
    # replies differ in length recompute a few, to encode their new tokens in one batch).
    second_prompts = sum(r.prompt_tokens for r in without_cache)
    assert second_prompts - encoded_second >= 0.9 * sum(r.prompt_tokens for r in replies)
    assert [r.text for r in with_cache] == [r.text for r in without_cache]
    assert [r.completion_tokens for r in with_cache] == [r.completion_tokens for r in without_cache]


def test_a_turn_that_rewrites_the_conversation_answers_as_without_the_cache(tiny_model):
    """A history window drops earlier turns: the next prompt is no extension of the last."""
    first_turns = conversations(3)
    policy = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, batch_size=4)
    replies = policy.generate(first_turns)
    windowed = [
        [turn[0], user(f"You see {reply.text[:20]}. Inventory: none.")]
        for turn, reply in zip(first_turns, replies, strict=True)
    ]
    with_cache = policy.generate(windowed)
    fresh = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, batch_size=4)
    without_cache = fresh.generate(windowed)
    assert [r.text for r in with_cache] == [r.text for r in without_cache]
    assert [r.prompt_tokens for r in with_cache] == [r.prompt_tokens for r in without_cache]


def test_a_sliding_window_reuses_its_episode_s_first_observation(tiny_model):
    """In the single-prompt view a prompt is no extension of the last (the window slides), but
    it starts as its episode's last prompt did, with the first observation: that start is
    encoded once, and the replies are as without the cache."""
    view = StudentView(format="single-prompt", history_steps=1, instruction=False)
    opening = Opening("")
    goals = ("stick", "bowl", "door", "boat", "chest", "sign")  # more than the last 4 turns
    firsts = [f"Goal: craft {goal}." + " Inventory: oak planks." * 8 for goal in goals]
    later = ["You got it.", "Nothing happens.", "You got it again."]

    def turn(number: int) -> list[list[ChatMessage]]:
        return [
            student_messages(
                opening,
                [Step(observation=first, action="get 1 oak log")] * number,
                later[number - 1] if number else first,
                view,
            )
            for first in firsts
        ]

    policy = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, batch_size=len(goals))
    for number in range(len(later) + 1):
        encoded_before = policy.prefill_tokens
        with_cache = policy.generate(turn(number))
        fresh = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, batch_size=len(goals))
        without_cache = fresh.generate(turn(number))
        assert [r.text for r in with_cache] == [r.text for r in without_cache]
    first_observation = len(policy.tokenizer(firsts[0])["input_ids"])
    prompts = sum(r.prompt_tokens for r in with_cache)
    assert policy.prefill_tokens - encoded_before <= prompts - len(firsts) * first_observation


def test_a_later_turn_encodes_only_the_text_added_since_its_episode_s_last_prompt(tiny_model):
    policy = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, batch_size=4)
    first_turns = conversations(2)
    replies = policy.generate(first_turns)
    second_turns = [
        turn
        + [
            assistant(reply.text),
            user("Ok."),
        ]
        for turn, reply in zip(first_turns, replies, strict=True)
    ]
    texts = [policy._render(conversation) for conversation in second_turns]
    for first, text, token_ids in zip(first_turns, texts, policy._encode(texts), strict=True):
        assert token_ids == policy.tokenizer(text, add_special_tokens=False)["input_ids"]
        first_text = policy._render(first)
        # Resumed after the first prompt's last added token: "<|im_start|>" + "assistant\n".
        resumed = policy._caches.encoded_start(text)[1]
        assert first_text[:resumed].endswith("<|im_start|>")
        assert first_text[resumed:] == "assistant\n"


def test_a_tokenizer_whose_added_tokens_take_in_whitespace_is_encoded_whole(tiny_model):
    from transformers import AddedToken, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    assert encodes_apart_after_added_tokens(tokenizer)
    tokenizer.add_tokens([AddedToken("<|tool|>", rstrip=True)])
    assert not encodes_apart_after_added_tokens(tokenizer)


def shared_start(policy: LocalModelPolicy, turns: list[list[ChatMessage]]) -> int:
    """How many leading tokens all of the turns' prompts have in common."""
    first, *others = policy._encode([policy._render(turn) for turn in turns])
    return min(common_prefix_length(first, other) for other in others)


def test_a_first_batch_encodes_the_opening_its_prompts_share_once(tiny_model):
    """A run's first batch has no kept turn to start from: the start its prompts share (the
    env's instruction) is encoded once for all, and each answers as it does alone."""
    goals = ("stick", "bowl", "door", "boat")
    turns = [[system("Craft the goal."), user(f"Goal: craft {goal}. Inventory: none.")]
             for goal in goals]  # fmt: skip
    policy = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, batch_size=4)
    replies = policy.generate(turns)
    assert len({r.prompt_tokens for r in replies}) == 1  # no padding: every row from the start
    shared = shared_start(policy, turns)
    assert shared > 10
    assert policy.prefill_tokens == sum(r.prompt_tokens for r in replies) - 3 * shared
    for turn, reply in zip(turns, replies, strict=True):
        alone = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS).generate([turn])
        assert alone[0].text == reply.text


def test_a_new_episode_reuses_the_cache_of_the_start_it_shares_with_another(tiny_model):
    policy = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS)
    first, second = conversations(3)[1:]  # the same system message and goal, then not
    policy.generate([first])
    encoded_before = policy.prefill_tokens
    [reply] = policy.generate([second])
    [first_ids, second_ids] = policy._encode([policy._render(first), policy._render(second)])
    shared = common_prefix_length(first_ids, second_ids)
    assert shared > 10
    assert policy.prefill_tokens - encoded_before == reply.prompt_tokens - shared
    alone = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS).generate([second])
    assert alone[0].text == reply.text


def test_greedy_replies_are_those_of_transformers_generate(tiny_model):
    """The decode loop with kept caches answers, turn after turn, as ``model.generate`` on the
    whole batch does (the ``generate`` decoder, the reference)."""
    own = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, batch_size=4)
    reference = LocalModelPolicy(
        tiny_model, max_new_tokens=MAX_NEW_TOKENS, batch_size=4, decoder="generate"
    )
    turns = conversations(6)
    for _ in range(2):  # the second turn continues the kept caches of the first
        replies = own.generate(turns)
        expected = reference.generate(turns)
        assert [r.text for r in replies] == [r.text for r in expected]
        assert [r.completion_tokens for r in replies] == [r.completion_tokens for r in expected]
        assert len({reply.text for reply in replies}) > 1  # the prompts really differ
        turns = [
            turn + [assistant(reply.text), user("Ok.")]
            for turn, reply in zip(turns, replies, strict=True)
        ]
    assert own.prefill_tokens < reference.prefill_tokens  # the caches were used


def test_the_generate_decoder_stops_where_the_decode_loop_does(tiny_model, monkeypatch):
    """The stopping rule is the same: a row ends when its action line does."""
    policy = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, decoder="generate")
    [free] = policy.generate(conversations(1))
    assert free.completion_tokens == MAX_NEW_TOKENS  # noise: no action line, no end token

    def ends_after_three(generated):
        return torch.full((generated.shape[0],), generated.shape[1] == 3)

    monkeypatch.setattr(policy, "_ends_action_line", ends_after_three)
    [stopped] = policy.generate(conversations(1))
    assert stopped.completion_tokens == 3


def test_sampling_with_the_generate_decoder_is_reproducible_for_a_seed(tiny_model):
    def sample(seed):
        policy = LocalModelPolicy(
            tiny_model,
            max_new_tokens=MAX_NEW_TOKENS,
            temperature=1.0,
            seed=seed,
            decoder="generate",
        )
        return [reply.text for reply in policy.generate(conversations(3))]

    assert sample(7) == sample(7)
    assert sample(7) != sample(8)


RANKED = ["Action: go north", "Action: take the key", "Action: open door", "Action: drop ball"]


def test_rank_takes_the_reply_the_model_finds_likeliest_wherever_it_is_listed(policy, tiny_model):
    conversation = conversations(3)[2]
    tokenizer, reference = policy.tokenizer, AutoModelForCausalLM.from_pretrained(tiny_model)
    prompt = tokenizer.apply_chat_template(
        chat_dicts(conversation), tokenize=False, add_generation_prompt=True
    )

    def likelihood(reply: str) -> float:
        whole = tokenizer.apply_chat_template(
            chat_dicts([*conversation, assistant(reply)]), tokenize=False
        )
        ids = tokenizer(whole, add_special_tokens=False)["input_ids"]
        prompt_length = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
        return whole_sequence_log_likelihood(reference, ids[:prompt_length], ids[prompt_length:])

    likeliest = max(RANKED, key=likelihood)
    for shift in range(len(RANKED)):
        listed = RANKED[shift:] + RANKED[:shift]
        reply = asyncio.run(policy.rank(conversation, listed, greedy=False))
        assert reply.text == likeliest
        assert reply.completion_tokens == 0 and reply.prompt_tokens > len(RANKED)


def test_concurrent_rankings_share_a_batch_and_choose_as_each_alone(tiny_model, monkeypatch):
    from agentcli.policy.local import scoring

    policy = LocalModelPolicy(tiny_model, max_new_tokens=MAX_NEW_TOKENS, batch_size=4)
    prompts = conversations(4)
    alone = [asyncio.run(policy.rank(c, RANKED, greedy=True)).text for c in prompts]
    batches: list[int] = []
    real = scoring.continuation_token_log_probs

    def counting(model, prompts, continuations, **kwargs):
        batches.append(len(prompts))
        return real(model, prompts, continuations, **kwargs)

    monkeypatch.setattr(scoring, "continuation_token_log_probs", counting)

    async def together():
        return await asyncio.gather(*(policy.rank(c, RANKED, greedy=True) for c in prompts))

    assert [reply.text for reply in asyncio.run(together())] == alone
    assert batches == [4]
