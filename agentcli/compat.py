"""The transformers and TRL internals we rely on, each named once, behind a function.

The local policy keeps attention caches from one turn to the next (``policy.local.kv_cache``)
and decodes with a loop of its own (``policy.decode``); training computes the prefix a batch
shares once (``train.shared_prefix``), logs TRL's metrics from a loss of its own
(``train.sft``) and resumes grpo in its epoch's order (``train.grpo_trainer``). All of them
reach below the documented surface: into cache layers and their tensors, the forward's
``cache`` argument, how a 4D mask is taken, the registry of attention functions, and a
trainer's metrics, token count, collator and sampler. All of that goes through here, so that a
release that changes one of them breaks one function, and tests/unit/test_compat.py, which
holds a contract test per function, says which. What stays outside is the public API:
tokenizers, ``from_pretrained``, configs, ``generate``, a trainer's constructor and ``train``.

A leaf below policy/ and train/, which both use it (train/ never imports policy/). Imports of
transformers stay inside the functions: importing the policy imports no torch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

KeysValues = list[tuple["torch.Tensor", "torch.Tensor"]]  # per layer, [rows, heads, positions, dim]


# --- caches ------------------------------------------------------------------------------------


def preallocated_cache(layer_count: int, length: int) -> Any:
    """A cache of ``layer_count`` plain full-length layers with room for ``length`` positions.

    A layer's tensors are allocated by ``allocate`` or, failing that, the first forward.
    Plain layers rather than ``StaticCache``, which gives sliding-window layers to a model
    that has them, keeping only the window, which a kept cache could not be sliced from.
    """
    from transformers import Cache, StaticLayer

    return Cache(layers=[StaticLayer(max_cache_len=length) for _ in range(layer_count)])


def allocate(cache: Any, rows: int, like: KeysValues) -> None:
    """Allocate each layer of a ``preallocated_cache`` for ``rows`` rows, its keys and values
    shaped (but for the rows and positions), typed and placed like the pair of ``like``."""
    for layer, (keys, values) in zip(cache.layers, like, strict=True):
        layer.lazy_initialization(
            keys.new_empty((rows, *keys.shape[1:])), values.new_empty((rows, *values.shape[1:]))
        )


def set_cached_length(cache: Any, length: int) -> None:
    """Mark the first ``length`` positions of a ``preallocated_cache`` as written (through
    ``layer_tensors``): the next forward writes its keys and values after them."""
    for layer in cache.layers:
        layer.cumulative_length.fill_(length)


def cached_length(cache: Any) -> int:
    """How many positions the cache holds keys and values of."""
    return int(cache.get_seq_length())


def layer_tensors(cache: Any) -> KeysValues:
    """Each layer's keys and values, as the cache holds them: a write into them writes into the
    cache (positions past ``cached_length`` of a preallocated cache are not yet written)."""
    return [(layer.keys, layer.values) for layer in cache.layers]


def growing_cache(config: Any = None, holding: KeysValues | None = None) -> Any:
    """A cache that each forward appends to: holding the keys and values ``holding``, or
    empty, its layers as the model's ``config`` says."""
    from transformers import DynamicCache

    if holding is None:
        return DynamicCache(config=config)
    return DynamicCache(ddp_cache_data=holding, config=config)


def unusual_layers(cache: Any) -> set[str]:
    """The kinds of the cache's layers that are not plain full-attention ones (sliding window,
    chunked, linear attention…), by class name; empty when all of them are."""
    from transformers.cache_utils import DynamicLayer

    return {type(layer).__name__ for layer in cache.layers if type(layer) is not DynamicLayer}


# --- the forward -------------------------------------------------------------------------------


def last_logits(model: Any, cache: Any, **inputs: Any) -> torch.Tensor:
    """The logits of each row's last position, ``[rows, vocabulary]``, from a forward of
    ``inputs`` (``input_ids``, ``attention_mask``, ``position_ids``) that appends the new keys
    and values to ``cache``; the other positions' logits are not computed."""
    return model(**inputs, cache=cache, logits_to_keep=1).logits[:, -1]


def forward_into(model: Any, cache: Any, **inputs: Any) -> Any:
    """The model's output for ``inputs`` (``logits_to_keep`` among them), the new keys and
    values appended to ``cache``."""
    return model(**inputs, cache=cache, use_cache=True)


def prepared_mask(visible: torch.Tensor) -> torch.Tensor:
    """``visible`` (``[rows, positions]``, True where a row attends) as a mask the model uses as
    it is, ``[rows, 1, 1, positions]``: a 2D mask would be rebuilt into a 4D one every step."""
    return visible[:, None, None, :]


# --- attention functions -----------------------------------------------------------------------


def attention_implementation(model: Any) -> str:
    """The name of the attention function the model runs (``"sdpa"``, ``"eager"``, …)."""
    return model.config._attn_implementation


def use_attention_function(model: Any, name: str, function: Callable[..., Any]) -> None:
    """Have ``model`` run ``function`` (``sdpa_attention``'s signature) for its attention,
    registered as ``name``, with the masks SDPA gets."""
    from transformers import AttentionInterface, AttentionMaskInterface
    from transformers.masking_utils import sdpa_mask

    AttentionInterface.register(name, function)
    AttentionMaskInterface.register(name, sdpa_mask)
    model.set_attn_implementation(name)


def sdpa_attention(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """transformers' SDPA attention: ``query`` ``[batch, heads, queries, dim]``, ``key`` and
    ``value`` ``[batch, key heads, positions, dim]``; returns ``[batch, queries, heads, dim]``."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)


# --- TRL's trainers ----------------------------------------------------------------------------


def trainer_metrics(trainer: Any, mode: str) -> dict[str, list[float]]:
    """What the trainer logs at its next log for ``mode`` (``"train"``, ``"eval"``): metric
    name → the values of the steps since, which it averages (TRL's ``_metrics``)."""
    return trainer._metrics[mode]


def add_trained_tokens(trainer: Any, tokens: int) -> int:
    """Add ``tokens`` to the input tokens the trainer has counted (TRL's
    ``_total_train_tokens``, which it logs as ``num_tokens``); the new total."""
    trainer._total_train_tokens += tokens
    return trainer._total_train_tokens


def wrap_collator(trainer: Any, wrap: Callable[[Any], Any]) -> None:
    """Have the built trainer's batches go through ``wrap(collator)``, around the collator
    the trainer chose for itself (which its constructor alone knows how to build)."""
    trainer.data_collator = wrap(trainer.data_collator)


def with_train_sampler(trainer_class: type, wrap: Callable[[Any], Any]) -> type:
    """``trainer_class`` drawing its training batches through ``wrap(sampler)``, around the
    sampler it builds for itself (transformers' ``Trainer._get_train_sampler``)."""

    class WithTrainSampler(trainer_class):
        def _get_train_sampler(self, dataset: Any = None) -> Any:
            return wrap(super()._get_train_sampler(dataset))

    return WithTrainSampler


def rewind_repeat_sampler(sampler: Any, draws: int) -> None:
    """Have TRL's ``RepeatSampler`` give, on its next pass, the order its seed's draw number
    ``draws`` (from 0) gives, whichever draws it made before (its ``shuffle``, ``generator``,
    ``seed`` and ``num_samples``); an unshuffled one keeps its order."""
    import torch

    if sampler.shuffle:
        sampler.generator.manual_seed(sampler.seed)
        for _ in range(draws):  # the draws before
            torch.randperm(sampler.num_samples, generator=sampler.generator)
