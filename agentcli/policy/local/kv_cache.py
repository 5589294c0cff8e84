"""Each episode's attention (KV) cache, kept from one turn to the next, and a batch's cache
built from them.

A turn then encodes only what is new since the last (the reply as the chat template renders
it, and the observation): the policy sees whole conversations, so a prompt finds its
episode's cache as the one whose prompt its token ids start with. The rows of a batch are
left-padded to one width and their caches placed at the same offsets, cut at the batch's
*start*: the first position that some continuing row has not cached. The decode loop
(``agentcli.policy.decode``) then encodes every row from the start on in one batched forward
(a row cached past the start recomputes a few tokens, which is cheaper than a forward of its
own). A prompt that continues no kept turn borrows the cache of the kept turn it shares the
longest start with: an episode's first turn, another episode's (the env's instruction); a
windowed view's later turn (single-prompt, ``history_steps``), its own episode's last turn
(the first observation stays in view while the window slides); the rows of a run's first
batch, with no kept turn to borrow from, the start they share, encoded once. Rows with too
little cached go through the model alone first, up to the start.

The kept prompts spare the tokenizer too: a conversation's text is encoded from where its
episode's last prompt was known to end (``encoded_start``).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentcli import compat

if TYPE_CHECKING:
    import torch

Layers = compat.KeysValues  # an episode's: (keys, values) of [1, heads, tokens, dim] per layer


@dataclass
class _CachedTurn:
    """An episode's attention cache after its last turn: its prompt and the reply generated."""

    prompt_text: str  # a later prompt's text that starts with it continues the episode
    token_ids: list[int]  # the tokens whose keys and values ``layers`` hold
    prompt_length: int  # a later prompt that starts with these tokens continues the episode
    layers: Layers


@dataclass
class BatchCache:
    """A batch's cache, preallocated for the whole turn, holding positions ``0..start``."""

    cache: Any
    start: int
    prefilled: int  # tokens that rows with too little cached went through the model alone for


class KeptCaches:
    """The episodes' caches, least recently used first. The rollout does not say when an
    episode ends, so the oldest go once there are more than ``capacity``."""

    def __init__(self, model: Any, tokenizer: Any, capacity: int) -> None:
        self._model = model
        self._capacity = capacity
        self._turns: OrderedDict[int, _CachedTurn] = OrderedDict()
        self._next_key = 0
        self._layer_count = model.config.num_hidden_layers
        self._added_tokens = {
            token_id: token.content for token_id, token in tokenizer.added_tokens_decoder.items()
        }
        self._resumable_encoding = encodes_apart_after_added_tokens(tokenizer)

    def encoded_start(self, text: str) -> tuple[list[int], int]:
        """The tokens of a start of ``text`` that are known already, and its length in
        characters (none: ``[], 0``).

        A conversation grows by a reply and an observation a turn, so its text starts with
        the prompt of its episode's kept turn. Encoding resumes after that prompt's last added
        token (``<|im_start|>``, say), where the tokenizer starts afresh anyway: re-encoding
        the whole conversation every turn took a tenth of the batch's time.
        """
        if not self._resumable_encoding:
            return [], 0
        for turn in reversed(self._turns.values()):
            if text.startswith(turn.prompt_text):
                prompt = turn.token_ids[: turn.prompt_length]
                for index in range(len(prompt) - 1, -1, -1):
                    content = self._added_tokens.get(prompt[index])
                    if content is not None:
                        length = turn.prompt_text.rindex(content) + len(content)
                        return prompt[: index + 1], length
                break
        return [], 0

    def batch_cache(self, rows: list[list[int]], pads: list[int], length: int) -> BatchCache:
        """The cache of a batch of prompts (their token ids, each left-padded by its pad), with
        room for ``length`` positions: each row's kept cache, or the one it borrows, up to the
        batch's start. Takes the rows' own caches out of those kept (``keep`` puts them back)."""
        taken = [self._take(token_ids) for token_ids in rows]
        taken, prefilled = self._share_opening(rows, taken)
        start = _batched_start(pads, [reused for _, reused in taken])
        row_layers = []
        for token_ids, (layers, reused), pad in zip(rows, taken, pads, strict=True):
            layers, encoded = self._prefill(token_ids, layers, reused, length=start - pad)
            row_layers.append(layers)
            prefilled += encoded
        return BatchCache(self._padded_cache(row_layers, pads, start, length), start, prefilled)

    def keep(
        self,
        texts: list[str],
        prompt_lengths: list[int],
        pads: list[int],
        output: torch.Tensor,
        cache: Any,
    ) -> None:
        """Keeps each row's cache (its padding cut off) for its episode's next turn: the
        prompt's text and length in tokens, and the ``output`` tokens whose keys it holds."""
        width = compat.cached_length(cache)  # the last token generated has no keys yet
        tensors = compat.layer_tensors(cache)
        for row, (text, prompt_length, pad) in enumerate(
            zip(texts, prompt_lengths, pads, strict=True)
        ):
            layers = [
                (
                    keys[row : row + 1, :, pad:width].clone(),
                    values[row : row + 1, :, pad:width].clone(),
                )
                for keys, values in tensors
            ]
            token_ids = output[row, pad:width].tolist()
            self._turns[self._next_key] = _CachedTurn(text, token_ids, prompt_length, layers)
            self._next_key += 1
        while len(self._turns) > self._capacity:
            self._turns.popitem(last=False)

    def _take(self, token_ids: list[int]) -> tuple[Layers | None, int]:
        """Removes and returns the cache of the episode that ``token_ids`` continues, with
        how many of its leading tokens apply (a prompt's last token is always encoded anew).

        The reply as generated and as the chat template re-renders it may differ, so only
        the tokens the two have in common are reused. Any other prompt borrows the cache of
        the kept turn it shares the longest start with (the most recent among equals); that
        cache stays kept for its own episode.
        """
        for key, turn in reversed(self._turns.items()):
            if token_ids[: turn.prompt_length] == turn.token_ids[: turn.prompt_length]:
                del self._turns[key]
                common = common_prefix_length(turn.token_ids, token_ids)
                return turn.layers, min(common, len(token_ids) - 1)
        shared = [
            (common_prefix_length(t.token_ids, token_ids), t.layers) for t in self._turns.values()
        ]
        common, layers = max(reversed(shared), key=lambda pair: pair[0], default=(0, None))
        return (layers, min(common, len(token_ids) - 1)) if common else (None, 0)

    def _share_opening(
        self, rows: list[list[int]], taken: list[tuple[Layers | None, int]]
    ) -> tuple[list[tuple[Layers | None, int]], int]:
        """Rows that found no kept turn to start from (a run's first batch) usually open alike
        (the env's instruction): the start they share is encoded once, in a forward of its
        own, and each of them starts from it; and how many tokens that forward encoded."""
        fresh = [row for row, (layers, _) in enumerate(taken) if layers is None]
        if len(fresh) < 2:
            return taken, 0
        first = rows[fresh[0]]
        shared = min(
            min(common_prefix_length(first, rows[row]) for row in fresh[1:]),
            min(len(rows[row]) for row in fresh) - 1,  # a prompt's last token is encoded anew
        )
        if shared < 1:
            return taken, 0
        layers, encoded = self._prefill(first, None, 0, length=shared)
        opened = {row: (layers, shared) for row in fresh}
        return [opened.get(row, kept) for row, kept in enumerate(taken)], encoded

    def _prefill(
        self, token_ids: list[int], kept: Layers | None, reused: int, *, length: int
    ) -> tuple[Layers | None, int]:
        """Keys and values of the first ``length`` of ``token_ids`` (None when there are
        none), from the ``reused`` tokens of the episode's ``kept`` cache and encoding only
        the tokens that it lacks; and how many tokens were encoded."""
        import torch

        if length <= 0:
            return None, 0
        if reused >= length:
            return [(keys[:, :, :length], values[:, :, :length]) for keys, values in kept], 0
        if kept is None:
            cache = compat.growing_cache(config=self._model.config)
        else:
            cache = compat.growing_cache(
                holding=[(keys[:, :, :reused], values[:, :, :reused]) for keys, values in kept]
            )
        new = token_ids[reused:length]
        compat.last_logits(
            self._model, cache, input_ids=torch.tensor([new], device=self._model.device)
        )
        return compat.layer_tensors(cache), len(new)

    def _padded_cache(
        self, rows: list[Layers | None], pads: list[int], start: int, length: int
    ) -> Any:
        """The rows' caches as one batch holding positions ``0..start``, each row shifted right
        by its pad (zeros that the attention mask hides), in a cache preallocated to ``length``
        for the whole turn: a growing cache would copy all of itself at every decoding step.
        With nothing cached yet, the first forward fills it."""
        cache = compat.preallocated_cache(self._layer_count, length)
        first = next((layers for layers in rows if layers is not None), None)
        if first is None:
            return cache
        compat.allocate(cache, len(rows), first)
        for index, (keys, values) in enumerate(compat.layer_tensors(cache)):
            for row, (pad, row_layers) in enumerate(zip(pads, rows, strict=True)):
                if row_layers is not None:
                    row_keys, row_values = row_layers[index]
                    keys[row, :, pad:start] = row_keys[0]
                    values[row, :, pad:start] = row_values[0]
        compat.set_cached_length(cache, start)
        return cache


def encodes_apart_after_added_tokens(tokenizer: Any) -> bool:
    """Whether a text encodes as its two parts do when cut right after an added token.

    True of a tokenizer that splits added tokens out before all else and takes each piece
    between them alike; false of one whose added tokens take in the whitespace around them or
    that marks where a text starts (SentencePiece's leading space).
    """
    added = list(tokenizer.added_tokens_decoder.values())
    if not added or any(token.lstrip or token.rstrip or token.single_word for token in added):
        return False

    def encode(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    before = f"Goal: craft a stick.{added[-1].content}"
    return all(
        encode(before + after) == encode(before) + encode(after)
        for after in ("assistant\nThought: go", "\n hello", " Action: get 1 oak log")
    )


def _batched_start(pads: list[int], reused: list[int]) -> int:
    """The first position (in the padded batch) that the batched forward encodes: the least
    any continuing row has cached, so that only rows with no cache need a forward alone.
    (A row reuses at most all its prompt but the last token, whose forward yields the reply's
    first token.)"""
    return min((pad + count for pad, count in zip(pads, reused, strict=True) if count), default=0)


def common_prefix_length(first: list[int], second: list[int]) -> int:
    """How many leading tokens the two have in common: a binary search over slices, which
    compare in C (``_take`` measures a prompt against every kept turn)."""
    low, high = 0, min(len(first), len(second))
    while low < high:
        middle = (low + high + 1) // 2
        if first[:middle] == second[:middle]:
            low = middle
        else:
            high = middle - 1
    return low
