"""A contract test per transformers or TRL internal named in ``agentcli.compat``: each fails,
saying which internal moved, when a release changes what decoding or training relies on.
On the tiny random model (compare its numbers, never read its text)."""

from __future__ import annotations

import pytest
import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, MistralConfig
from trl import SFTConfig, SFTTrainer
from trl.trainer.utils import RepeatSampler

from agentcli import compat

PROMPT = [[5, 17, 42, 8, 99, 23]]


@pytest.fixture(scope="module")
def model(tiny_model):
    return AutoModelForCausalLM.from_pretrained(tiny_model).eval()


def layers(model) -> int:
    return model.config.num_hidden_layers


def encoded(model, token_ids):
    """The keys and values of ``token_ids`` (one row), from a growing cache."""
    cache = compat.growing_cache(config=model.config)
    with torch.inference_mode():
        compat.last_logits(model, cache, input_ids=torch.tensor(token_ids))
    return cache


def test_the_forward_takes_the_cache_as_cache_and_computes_only_the_last_logits(model):
    cache = compat.growing_cache(config=model.config)
    with torch.inference_mode():
        logits = compat.last_logits(model, cache, input_ids=torch.tensor(PROMPT))
        full = model(input_ids=torch.tensor(PROMPT)).logits
    assert compat.cached_length(cache) == len(PROMPT[0]), "the forward's `cache` argument"
    assert logits.shape == (1, model.config.vocab_size), "the forward's `logits_to_keep`"
    torch.testing.assert_close(logits, full[:, -1])


def test_a_growing_cache_holds_what_it_is_given_and_appends_to_it(model):
    whole = encoded(model, PROMPT)
    tensors = compat.layer_tensors(whole)
    assert len(tensors) == layers(model), "a cache's `layers`"
    keys, values = tensors[0]
    assert keys.shape[0] == 1 and keys.shape[2] == len(PROMPT[0]), "a layer's `keys`"
    assert values.shape[:3] == keys.shape[:3], "a layer's `values`"
    # Given the first four positions, a forward of the rest ends as the whole prompt's did.
    held = compat.growing_cache(holding=[(k[:, :, :4], v[:, :, :4]) for k, v in tensors])
    assert compat.cached_length(held) == 4, "DynamicCache's `ddp_cache_data`"
    with torch.inference_mode():
        compat.last_logits(model, held, input_ids=torch.tensor([PROMPT[0][4:]]))
    for (got_keys, got_values), (want_keys, want_values) in zip(
        compat.layer_tensors(held), tensors, strict=True
    ):
        torch.testing.assert_close(got_keys, want_keys)
        torch.testing.assert_close(got_values, want_values)


def test_a_preallocated_cache_is_written_in_place_and_continues_after_its_length(model):
    prompt = torch.tensor(PROMPT)
    room = len(PROMPT[0]) + 3
    like = compat.layer_tensors(encoded(model, PROMPT))
    cache = compat.preallocated_cache(layers(model), room)
    compat.allocate(cache, 2, like)
    tensors = compat.layer_tensors(cache)
    keys, values = tensors[0]
    assert keys.shape == (2, like[0][0].shape[1], room, like[0][0].shape[3]), (
        "StaticLayer's `lazy_initialization`"
    )
    assert values.dtype == like[0][1].dtype
    # Written by hand up to position 4, marked so, then a forward of the rest: as a forward of
    # the whole prompt.
    for (keys, values), (prompt_keys, prompt_values) in zip(tensors, like, strict=True):
        keys[:, :, :4] = prompt_keys[:, :, :4]
        values[:, :, :4] = prompt_values[:, :, :4]
    compat.set_cached_length(cache, 4)
    assert compat.cached_length(cache) == 4, "StaticLayer's `cumulative_length`"
    with torch.inference_mode():
        compat.last_logits(model, cache, input_ids=prompt[:, 4:].expand(2, -1))
    assert compat.cached_length(cache) == len(PROMPT[0])
    for (keys, _), (prompt_keys, _) in zip(compat.layer_tensors(cache), like, strict=True):
        assert keys.shape[2] == room, "the layer's tensors stay preallocated"
        torch.testing.assert_close(keys[:, :, : len(PROMPT[0])], prompt_keys.expand(2, -1, -1, -1))
        assert not keys[:, :, len(PROMPT[0]) :].any()


def test_a_prepared_mask_is_used_as_it_is(model):
    """A 4D mask goes to attention unchanged: hiding a cached position changes the logits, and
    showing every position gives what the usual 2D mask does."""
    cache_length = len(PROMPT[0]) - 1
    visible = torch.ones(1, len(PROMPT[0]), dtype=torch.bool)
    hidden = visible.clone()
    hidden[0, 2] = False

    def step(mask):
        cache = encoded(model, [PROMPT[0][:cache_length]])
        with torch.inference_mode():
            return compat.last_logits(
                model,
                cache,
                input_ids=torch.tensor([PROMPT[0][cache_length:]]),
                attention_mask=mask,
                position_ids=torch.tensor([[cache_length]]),
            )

    prepared = compat.prepared_mask(visible)
    assert prepared.shape == (1, 1, 1, len(PROMPT[0]))
    torch.testing.assert_close(step(prepared), step(visible.long()))
    assert not torch.allclose(step(compat.prepared_mask(hidden)), step(prepared)), (
        "a 4D mask is no longer used as it is"
    )


def test_an_attention_function_is_registered_under_a_name_and_run(tiny_model):
    model = AutoModelForCausalLM.from_pretrained(tiny_model).eval()
    assert compat.attention_implementation(model) == "sdpa", "config's `_attn_implementation`"
    with torch.inference_mode():
        expected = model(input_ids=torch.tensor(PROMPT)).logits
    calls = []

    def passing_on(module, query, key, value, attention_mask, **kwargs):
        calls.append((query.shape, key.shape, attention_mask))
        return compat.sdpa_attention(module, query, key, value, attention_mask, **kwargs)

    compat.use_attention_function(model, "agentgym_contract_test", passing_on)
    assert compat.attention_implementation(model) == "agentgym_contract_test"
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor(PROMPT)).logits
    assert len(calls) == layers(model), "AttentionInterface.register / set_attn_implementation"
    query_shape, key_shape, mask = calls[0]
    assert query_shape[0] == 1 and query_shape[2] == len(PROMPT[0]), "query: [batch, heads, q, dim]"
    assert key_shape[2] == len(PROMPT[0]), "key: [batch, key heads, positions, dim]"
    assert mask is None or mask.dtype == torch.bool, "AttentionMaskInterface: SDPA's masks"
    torch.testing.assert_close(logits, expected)  # sdpa_attention_forward is SDPA


def test_sdpa_attention_returns_batch_queries_heads_dim():
    query = torch.randn(2, 4, 3, 8)
    key = value = torch.randn(2, 2, 5, 8)  # two query heads share each key head
    module = torch.nn.Module()
    module.is_causal = False
    module.num_key_value_groups = 2
    output, weights = compat.sdpa_attention(module, query, key, value, None, scaling=8**-0.5)
    assert output.shape == (2, 3, 4, 8) and weights is None
    expected = torch.nn.functional.scaled_dot_product_attention(
        query, key.repeat_interleave(2, dim=1), value.repeat_interleave(2, dim=1)
    )
    torch.testing.assert_close(output, expected.transpose(1, 2))


def test_a_growing_cache_given_a_config_and_keys_holds_them_as_that_config_lays_out(model):
    tensors = compat.layer_tensors(encoded(model, PROMPT))
    held = compat.growing_cache(
        model.config, holding=[(k[:, :, :4], v[:, :, :4]) for k, v in tensors]
    )
    assert compat.cached_length(held) == 4, "DynamicCache's `ddp_cache_data` with `config`"
    assert compat.unusual_layers(held) == set()


def test_unusual_layers_names_what_is_not_a_plain_full_attention_layer(model):
    assert compat.unusual_layers(compat.growing_cache(config=model.config)) == set(), (
        "cache_utils' `DynamicLayer`, a cache's `layers`"
    )
    sliding = MistralConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        sliding_window=16,
    )
    assert compat.unusual_layers(compat.growing_cache(config=sliding)) == {
        "DynamicSlidingWindowLayer"
    }


def test_a_forward_into_a_cache_appends_to_it_and_keeps_the_logits_asked_for(model):
    cache = compat.growing_cache(config=model.config)
    keep = torch.tensor([[False, True, False, False, True, True]])
    with torch.inference_mode():
        output = compat.forward_into(
            model, cache, input_ids=torch.tensor(PROMPT), logits_to_keep=keep
        )
        full = model(input_ids=torch.tensor(PROMPT)).logits
    assert compat.cached_length(cache) == len(PROMPT[0]), "the forward's `cache`, `use_cache`"
    # in (row, position) order, one row each: what train.sft's loss reads them as
    assert output.logits.shape == (3, model.config.vocab_size), "a boolean `logits_to_keep`"
    torch.testing.assert_close(output.logits, full[keep])


def sft_trainer(tiny_model, tmp_path, trainer_class: type = SFTTrainer):
    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    rows = [[5, 17, 42, 8, 99], [23, 7, 64, 12]]
    dataset = Dataset.from_dict(
        {"input_ids": rows, "completion_mask": [[0, 0, 1, 1, 1], [0, 1, 1, 1]]}
    )
    arguments = SFTConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        per_device_train_batch_size=2,
        max_steps=1,
        report_to="none",
        completion_only_loss=True,
        max_length=None,
        disable_tqdm=True,
        activation_checkpointing=False,  # as on CPU in our runs (TRL's default warns)
    )
    return trainer_class(
        model=AutoModelForCausalLM.from_pretrained(tiny_model),
        args=arguments,
        train_dataset=dataset,
        processing_class=tokenizer,
    )


@pytest.fixture
def trainer(tiny_model, tmp_path):
    return sft_trainer(tiny_model, tmp_path)


def test_a_trainers_metrics_are_averaged_into_its_next_log(trainer):
    trainer.model.train()
    metrics = compat.trainer_metrics(trainer, "train")
    metrics["entropy"] += [1.0, 3.0]
    trainer.log({"loss": 0.5})
    assert trainer.state.log_history[-1]["entropy"] == 2.0, "SFTTrainer's `_metrics`"
    assert not compat.trainer_metrics(trainer, "train"), "cleared once logged"


def test_a_trainers_token_count_starts_at_zero_and_adds_up(trainer):
    assert compat.add_trained_tokens(trainer, 5) == 5, "SFTTrainer's `_total_train_tokens`"
    assert compat.add_trained_tokens(trainer, 3) == 8


def test_a_wrapped_collator_makes_the_trainers_batches(trainer):
    def marked(collate):
        return lambda examples: {**collate(examples), "marked": len(examples)}

    compat.wrap_collator(trainer, marked)
    batch = next(iter(trainer.get_train_dataloader()))
    assert batch["marked"] == 2, "the trainer's `data_collator`, read when it batches"
    assert batch["input_ids"].shape[0] == 2


def test_a_trainer_class_draws_its_batches_through_a_wrapped_sampler(tiny_model, tmp_path):
    drawn = []

    class Recorded(torch.utils.data.Sampler):
        def __init__(self, sampler):
            self.sampler = sampler

        def __len__(self):
            return len(self.sampler)

        def __iter__(self):
            order = list(self.sampler)
            drawn.append(order)
            return iter(order)

    trainer_class = compat.with_train_sampler(SFTTrainer, Recorded)
    trainer = sft_trainer(tiny_model, tmp_path, trainer_class)
    next(iter(trainer.get_train_dataloader()))
    assert drawn and sorted(drawn[0]) == [0, 1], "Trainer's `_get_train_sampler`"


def test_a_rewound_repeat_sampler_gives_the_draw_asked_for():
    def sampler(shuffle=True):
        return RepeatSampler(range(6), mini_repeat_count=2, batch_size=3, shuffle=shuffle, seed=7)

    drawing = sampler()
    draws = [list(drawing) for _ in range(3)]
    assert draws[0] != draws[1] != draws[2]
    rewound = sampler()
    for draw in (2, 0, 1):
        compat.rewind_repeat_sampler(rewound, draw)
        assert list(rewound) == draws[draw], (
            "RepeatSampler's `shuffle`, `generator`, `seed`, `num_samples`"
        )
    in_order = sampler(shuffle=False)
    compat.rewind_repeat_sampler(in_order, 2)
    assert list(in_order) == [index for index in range(6) for _ in range(2)]
