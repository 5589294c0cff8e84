"""A local Hugging Face model that answers the turns of many episodes as one batch.

Each ``act`` renders its conversation with the model's chat template, puts it on a queue and
waits. One batching task takes the waiting requests (up to ``batch_size``, waiting a little
for the turns the last batch answered and lingering a few ms for stragglers), encodes them
(only the text added since each episode's last prompt), left-pads them into one batch and
decodes in a worker thread, so the event loop keeps stepping the other episodes meanwhile.
Requests that arrive during a batch form the next one.

Each episode's attention (KV) cache is kept from one turn to the next, so a turn encodes only
what is new since the last (the reply as the chat template renders it, and the observation):
the policy sees whole conversations, so a prompt finds its episode's cache as the one whose
prompt its token ids start with. The rows of a batch are left-padded to one width and their
caches placed at the same offsets, cut at the batch's *start*: the first position that some
continuing row has not cached. ``decode`` (``agentcli.policy.decode``) then encodes every row
from the start on in one batched forward (a row cached past the start recomputes a few tokens,
which is cheaper than a forward of its own) and decodes. An episode's first turn borrows the
cache of a recent episode for the start they share (the env's instruction); only rows with no
cache at all go through the model alone first, up to the start.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentcli.common import no_progress_bars
from agentcli.conversation import chat_dicts, cut_after_action, holds_action_line
from agentcli.data.records import ChatMessage
from agentcli.errors import ModelUnavailableError, UsageError
from agentcli.policy.base import Reply

if TYPE_CHECKING:
    import torch

    from agentcli.envs.client import RemoteSession

Device = Literal["auto", "cpu", "cuda"]

# Episodes come back from their env steps a few ms apart (more on a loaded machine): a request
# arriving within this window of the previous one joins its batch rather than waiting for the
# next batch. The window grows with the time a batch takes, so that lingering never costs
# more than a small fraction of the batch a late request would otherwise wait for.
GATHER_WINDOW_S = 0.005
GATHER_WINDOW_FRACTION = 0.05
# The turns answered by a batch mostly come back (the episodes' next turns, or new episodes in
# their place) an env step later. A batch waits for as many, up to this fraction of a batch's
# time: a few turns that come back late would otherwise go in a small batch of their own and
# stay out of step with the others, each group then waiting on the other's batches.
RETURN_WAIT_FRACTION = 0.25
# A new episode looks for the start it shares with another among this many recent turns.
PREFIX_CANDIDATES = 4


@dataclass
class _Request:
    text: str  # the conversation as the chat template renders it
    future: asyncio.Future[Reply]


@dataclass
class _Prompt:
    request_index: int
    text: str  # the conversation as the chat template renders it
    token_ids: list[int]


@dataclass
class _CachedTurn:
    """An episode's attention cache after its last turn: its prompt and the reply generated."""

    prompt_text: str  # a later prompt's text that starts with it continues the episode
    token_ids: list[int]  # the tokens whose keys and values ``layers`` hold
    prompt_length: int  # a later prompt that starts with these tokens continues the episode
    layers: list[tuple[torch.Tensor, torch.Tensor]]  # (keys, values) of [1, heads, tokens, dim]


class LocalModelPolicy:
    """Greedy (``temperature=0``) or seeded sampling from a model directory, batched."""

    name = "local"

    def __init__(
        self,
        model_path: str | Path,
        *,
        max_new_tokens: int = 128,
        temperature: float = 0.0,
        seed: int = 0,
        batch_size: int = 32,
        device: Device = "auto",
        max_context_tokens: int | None = None,
    ) -> None:
        if max_new_tokens < 1 or batch_size < 1 or temperature < 0:
            raise UsageError(
                "max_new_tokens and batch_size must be at least 1 and temperature at least 0"
            )
        self.model_path = Path(model_path)
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.seed = seed
        self.batch_size = batch_size
        self.tokenizer, self.model = _load(self.model_path, device)
        self.max_context_tokens = max_context_tokens or self.model.config.max_position_embeddings
        self.generate_calls = 0  # how many batches went through the model
        self.prefill_tokens = 0  # prompt tokens encoded: those found in a kept cache are not
        # The episodes' caches, least recently used first. The rollout does not say when an
        # episode ends, so the oldest go once there are more than two batches' worth.
        self._caches: OrderedDict[int, _CachedTurn] = OrderedDict()
        self._cache_capacity = 2 * batch_size
        self._next_cache_key = 0
        self._layer_count = self.model.config.num_hidden_layers
        self._added_tokens = {
            token_id: token.content
            for token_id, token in self.tokenizer.added_tokens_decoder.items()
        }
        self._resumable_encoding = _encodes_apart_after_added_tokens(self.tokenizer)
        self._model_lock = threading.Lock()
        self._last_batch_s = 0.0  # how long the last batch took
        self._last_batch_rows = 0  # and how many turns it answered
        self._queue: asyncio.Queue[_Request] | None = None
        self._batcher: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def act(
        self, conversation: Sequence[ChatMessage], session: RemoteSession | None = None
    ) -> Reply:
        queue = self._ensure_batcher()
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        # Rendered now, while other episodes still wait on their env steps, rather than once
        # the batch is complete.
        await queue.put(_Request(self._render(conversation), future))
        return await future

    async def aclose(self) -> None:
        """Stop batching; turns still waiting are cancelled rather than left hanging."""
        if self._batcher is not None:
            self._batcher.cancel()
            await asyncio.gather(self._batcher, return_exceptions=True)
        while self._queue is not None and not self._queue.empty():
            self._queue.get_nowait().future.cancel()
        self._batcher = self._queue = self._loop = None

    def generate(self, conversations: Sequence[Sequence[ChatMessage]]) -> list[Reply]:
        """Answer several conversations as one batch (blocking).

        Conversations that would not fit the context get ``context_exceeded`` and take no
        part in the batch.
        """
        return self._answer_texts([self._render(conversation) for conversation in conversations])

    def _answer_texts(self, texts: list[str]) -> list[Reply]:
        replies: list[Reply | None] = [None] * len(texts)
        prompts: list[_Prompt] = []
        for index, (text, token_ids) in enumerate(zip(texts, self._encode(texts), strict=True)):
            if len(token_ids) + self.max_new_tokens > self.max_context_tokens:
                replies[index] = Reply("", prompt_tokens=len(token_ids), context_exceeded=True)
            else:
                prompts.append(_Prompt(index, text, token_ids))
        if prompts:
            for prompt, reply in zip(prompts, self._generate(prompts), strict=True):
                replies[prompt.request_index] = reply
        return [reply for reply in replies if reply is not None]  # every slot is filled

    def _ensure_batcher(self) -> asyncio.Queue[_Request]:
        # A queue and its batching task belong to one event loop; a policy reused under a new
        # loop (a second asyncio.run) starts afresh.
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._queue is None:
            self._loop, self._queue = loop, asyncio.Queue()
            self._batcher = loop.create_task(self._run_batches(self._queue))
        return self._queue

    async def _run_batches(self, queue: asyncio.Queue[_Request]) -> None:
        batch: list[_Request] = []
        loop = asyncio.get_running_loop()
        try:
            while True:
                batch = [await queue.get()]
                deadline = loop.time() + RETURN_WAIT_FRACTION * self._last_batch_s
                while len(batch) < min(self._last_batch_rows, self.batch_size):
                    try:
                        batch.append(await asyncio.wait_for(queue.get(), deadline - loop.time()))
                    except TimeoutError:
                        break
                window = max(GATHER_WINDOW_S, GATHER_WINDOW_FRACTION * self._last_batch_s)
                while len(batch) < self.batch_size:
                    if queue.empty():
                        await asyncio.sleep(window)
                        if queue.empty():
                            break
                    batch.append(queue.get_nowait())
                self._last_batch_rows = len(batch)
                await self._answer(batch)
        finally:  # cancelled (aclose): nobody will answer the turns in hand
            for request in batch:
                request.future.cancel()

    async def _answer(self, batch: list[_Request]) -> None:
        batch = [request for request in batch if not request.future.done()]
        if not batch:
            return
        texts = [request.text for request in batch]
        started = time.perf_counter()
        try:
            replies = await asyncio.to_thread(self._answer_texts, texts)
        except Exception as exc:  # the episodes record the failure; the batcher goes on
            for request in batch:
                if not request.future.done():
                    request.future.set_exception(exc)
            return
        finally:
            self._last_batch_s = time.perf_counter() - started
        for request, reply in zip(batch, replies, strict=True):
            if not request.future.done():
                request.future.set_result(reply)

    def _render(self, conversation: Sequence[ChatMessage]) -> str:
        return self.tokenizer.apply_chat_template(
            chat_dicts(conversation), tokenize=False, add_generation_prompt=True
        )

    def _encode(self, texts: list[str]) -> list[list[int]]:
        """The tokens of each conversation's text."""
        with self._model_lock:  # a batch in flight changes the kept turns
            starts = [self._encoded_start(text) for text in texts]
        # One call for all: the tokenizer encodes a batch on several threads. The template
        # writes the special tokens itself.
        rests = self.tokenizer(
            [text[length:] for text, (_, length) in zip(texts, starts, strict=True)],
            add_special_tokens=False,
        )["input_ids"]
        return [start + rest for (start, _), rest in zip(starts, rests, strict=True)]

    def _encoded_start(self, text: str) -> tuple[list[int], int]:
        """The tokens of a start of ``text`` that are known already, and its length in
        characters (none: ``[], 0``).

        A conversation grows by a reply and an observation a turn, so its text starts with
        the prompt of its episode's kept turn. Encoding resumes after that prompt's last added
        token (``<|im_start|>``, say), where the tokenizer starts afresh anyway: re-encoding
        the whole conversation every turn took a tenth of the batch's time.
        """
        if not self._resumable_encoding:
            return [], 0
        for turn in reversed(self._caches.values()):
            if text.startswith(turn.prompt_text):
                prompt = turn.token_ids[: turn.prompt_length]
                for index in range(len(prompt) - 1, -1, -1):
                    content = self._added_tokens.get(prompt[index])
                    if content is not None:
                        length = turn.prompt_text.rindex(content) + len(content)
                        return prompt[: index + 1], length
                break
        return [], 0

    def _generate(self, prompts: list[_Prompt]) -> list[Reply]:
        import torch

        from agentcli.policy.decode import decode

        width = max(len(prompt.token_ids) for prompt in prompts)
        pads = [width - len(prompt.token_ids) for prompt in prompts]
        with self._model_lock, torch.inference_mode():
            kept = [self._take_cache(prompt.token_ids) for prompt in prompts]
            start = _batched_start(pads, [reused for _, reused in kept])
            row_layers = [
                self._prefill(prompt.token_ids, layers, reused, length=start - pad)
                for prompt, (layers, reused), pad in zip(prompts, kept, pads, strict=True)
            ]
        cache = self._padded_cache(row_layers, pads, start, width + self.max_new_tokens)
        self.prefill_tokens += sum(min(width - start, len(p.token_ids)) for p in prompts)
        device = self.model.device
        input_ids = torch.tensor(
            [
                [self.tokenizer.pad_token_id] * pad + p.token_ids
                for pad, p in zip(pads, prompts, strict=True)
            ],
            device=device,
        )
        attention_mask = (
            torch.arange(width, device=device) >= torch.tensor(pads, device=device)[:, None]
        ).long()
        with self._model_lock, torch.inference_mode():
            generator = None
            if self.temperature > 0:
                # Seeded per call so a rerun with the same batches samples the same tokens.
                generator = torch.Generator(device).manual_seed(self.seed + self.generate_calls)
            self.generate_calls += 1
            decoded = decode(
                self.model,
                input_ids,
                attention_mask,
                cache,
                max_new_tokens=self.max_new_tokens,
                eos_token_id=self.tokenizer.eos_token_id,
                pad_token_id=self.tokenizer.pad_token_id,
                ends_turn=self._ends_action_line,
                temperature=self.temperature,
                generator=generator,
            )
            self._keep(prompts, pads, torch.cat([input_ids, decoded.tokens], dim=1), cache)
        new_tokens = decoded.tokens.tolist()
        replies = []
        for row, prompt in enumerate(prompts):
            completion = new_tokens[row][: decoded.lengths[row]]
            text = self.tokenizer.decode(completion, skip_special_tokens=True)
            replies.append(
                Reply(
                    cut_after_action(text),
                    prompt_tokens=len(prompt.token_ids),
                    completion_tokens=len(completion),
                )
            )
        return replies

    def _padded_cache(
        self,
        rows: list[list[tuple[torch.Tensor, torch.Tensor]] | None],
        pads: list[int],
        start: int,
        width: int,
    ) -> Any:
        """The rows' caches as one batch holding positions ``0..start``, each row shifted right
        by its pad (zeros that the attention mask hides), in a cache preallocated to ``width``
        for the whole turn: a growing ``DynamicCache`` would copy all of itself at every
        decoding step."""
        from transformers import Cache, StaticLayer

        # Plain full-length layers, as the rows' caches are (``StaticCache`` would give
        # sliding-window layers to a model that has them, keeping only the window, which
        # ``_keep`` could not slice). With nothing cached yet, the first forward fills them.
        first = next((layers for layers in rows if layers is not None), None)
        cache = Cache(layers=[StaticLayer(max_cache_len=width) for _ in range(self._layer_count)])
        if first is None:
            return cache
        for index, layer in enumerate(cache.layers):
            first_keys, first_values = first[index]
            layer.lazy_initialization(
                first_keys.new_empty((len(rows), *first_keys.shape[1:])),
                first_values.new_empty((len(rows), *first_values.shape[1:])),
            )
            for row, (pad, row_layers) in enumerate(zip(pads, rows, strict=True)):
                if row_layers is not None:
                    keys, values = row_layers[index]
                    layer.keys[row, :, pad:start] = keys[0]
                    layer.values[row, :, pad:start] = values[0]
            layer.cumulative_length.fill_(start)
        return cache

    def _prefill(
        self,
        token_ids: list[int],
        kept: list[tuple[torch.Tensor, torch.Tensor]] | None,
        reused: int,
        *,
        length: int,
    ) -> list[tuple[torch.Tensor, torch.Tensor]] | None:
        """Keys and values of the first ``length`` of ``token_ids`` (None when there are
        none), from the ``reused`` tokens of the episode's ``kept`` cache and encoding only
        the tokens that it lacks."""
        import torch
        from transformers import DynamicCache

        if length <= 0:
            return None
        if reused >= length:
            return [(keys[:, :, :length], values[:, :, :length]) for keys, values in kept]
        if kept is None:
            cache = DynamicCache(config=self.model.config)
        else:
            cache = DynamicCache(
                ddp_cache_data=[
                    (keys[:, :, :reused], values[:, :, :reused]) for keys, values in kept
                ]
            )
        new = token_ids[reused:length]
        self.prefill_tokens += len(new)
        self.model(input_ids=torch.tensor([new], device=self.model.device), cache=cache)
        return [(layer.keys, layer.values) for layer in cache.layers]

    def _take_cache(
        self, token_ids: list[int]
    ) -> tuple[list[tuple[torch.Tensor, torch.Tensor]] | None, int]:
        """Removes and returns the cache of the episode that ``token_ids`` continues, with
        how many of its leading tokens apply (a prompt's last token is always encoded anew).

        The reply as generated and as the chat template re-renders it may differ, so only
        the tokens the two have in common are reused. A new episode borrows the cache of a
        recent one for the start they share (the env's instruction, typically); that cache
        stays kept for its own episode.
        """
        for key, turn in reversed(self._caches.items()):
            if token_ids[: turn.prompt_length] == turn.token_ids[: turn.prompt_length]:
                del self._caches[key]
                common = _common_prefix_length(turn.token_ids, token_ids)
                return turn.layers, min(common, len(token_ids) - 1)
        recent = list(self._caches.values())[-PREFIX_CANDIDATES:]
        shared = [(_common_prefix_length(t.token_ids, token_ids), t.layers) for t in recent]
        common, layers = max(shared, key=lambda pair: pair[0], default=(0, None))
        return (layers, min(common, len(token_ids) - 1)) if common else (None, 0)

    def _keep(
        self, prompts: list[_Prompt], pads: list[int], output: torch.Tensor, cache: Any
    ) -> None:
        """Keeps each row's cache (its padding cut off) for its episode's next turn."""
        width = int(cache.get_seq_length())  # the last token generated has no keys yet
        for row, (prompt, pad) in enumerate(zip(prompts, pads, strict=True)):
            layers = [
                (
                    layer.keys[row : row + 1, :, pad:width].clone(),
                    layer.values[row : row + 1, :, pad:width].clone(),
                )
                for layer in cache.layers
            ]
            token_ids = output[row, pad:width].tolist()
            self._caches[self._next_cache_key] = _CachedTurn(
                prompt.text, token_ids, len(prompt.token_ids), layers
            )
            self._next_cache_key += 1
        while len(self._caches) > self._cache_capacity:
            self._caches.popitem(last=False)

    def _ends_action_line(self, generated: torch.Tensor) -> torch.Tensor:
        """Which rows' newest token ends their action line (``generated``: [rows, steps]).

        Only a token holding a newline can, so only those rows' texts are read: each the
        concatenated texts of its tokens."""
        ends = self._newline_tokens[generated[:, -1]]
        for row in ends.nonzero().flatten().tolist():
            text = "".join(self._token_texts[token] for token in generated[row].tolist())
            ends[row] = holds_action_line(text)
        return ends

    @functools.cached_property
    def _newline_tokens(self) -> torch.Tensor:
        """A flag per token id of the model's vocabulary: whether its text holds a newline."""
        import torch

        return torch.tensor(["\n" in text for text in self._token_texts], device=self.model.device)

    @functools.cached_property
    def _token_texts(self) -> list[str]:
        """Each token id's text on its own, as the stopping rule reads a reply."""
        vocabulary = self.model.get_output_embeddings().weight.shape[0]
        return self.tokenizer.batch_decode([[token] for token in range(vocabulary)])


def _encodes_apart_after_added_tokens(tokenizer: Any) -> bool:
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


def _common_prefix_length(first: list[int], second: list[int]) -> int:
    length = 0
    for a, b in zip(first, second, strict=False):  # up to the shorter
        if a != b:
            break
        length += 1
    return length


def _load(model_path: Path, device: Device) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agentcli.policy.decode import use_decode_attention

    if not (model_path / "config.json").is_file():
        raise ModelUnavailableError(
            f"{model_path} is not a model directory (no config.json); build one with "
            "`agentgym model tiny --out DIR` or pass a trained checkpoint"
        )
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif device == "cuda" and not torch.cuda.is_available():
        raise UsageError("device 'cuda' asked for, but torch sees no GPU; use device 'cpu'")
    # bf16 on a GPU for speed; fp32 on CPU, where bf16 matmuls are slow.
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    with no_progress_bars():
        tokenizer = AutoTokenizer.from_pretrained(model_path)
        model = AutoModelForCausalLM.from_pretrained(model_path, dtype=dtype).to(device)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    use_decode_attention(model)
    model.eval()
    return tokenizer, model
