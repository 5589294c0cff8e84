"""A local Hugging Face model that answers the turns of many episodes as one batch.

Each ``act`` renders its conversation with the model's chat template and hands it to the
``batcher``, which gathers the turns of many episodes into batches and answers each in a
worker thread. A batch is encoded (only the text added since each episode's last prompt),
left-padded, and decoded by one of two decoders:

- ``own`` (the default): our decode loop (``agentcli.policy.decode``) over a cache built from
  the episodes' caches kept since their last turn (``kv_cache``), so that a turn encodes only
  what is new;
- ``generate``: transformers' ``model.generate`` on the whole batch (``reference``), the
  reference that ``own`` matches, greedy, token for token, and a fallback.

Built with ``load_in_background``, the policy loads its model in a worker thread and its first
turns wait for it: a rollout starts its env servers and opens and resets its sessions while
torch, transformers and the weights load, instead of after.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentcli.common import no_progress_bars
from agentcli.conversation import chat_dicts, cut_after_action, holds_action_line
from agentcli.errors import AgentGymError, FatalRunError, ModelUnavailableError, UsageError
from agentcli.policy.base import Reply
from agentcli.policy.local.batcher import Batcher
from agentcli.policy.local.kv_cache import KeptCaches
from agentcli.policy.streams import derived_seed, turn_seed
from agentcli.records import ChatMessage

if TYPE_CHECKING:
    import torch

    from agentcli.envs.wire.client import RemoteSession
    from agentcli.policy.decode import Decoded

Device = Literal["auto", "cpu", "cuda"]
Decoder = Literal["own", "generate"]


# Continuations scored in one forward, each with a copy of its prompt's keys and values: a
# bound on the memory they take (rows × prompt length × layers), not on the turns in a batch.
RANKED_ROWS_PER_FORWARD = 128


@dataclass
class _Ranking:
    prompt: str  # the conversation as the chat template renders it, opened for the model's turn
    replies: list[str]  # the whole turns to choose among
    continuations: list[str]  # what the template writes after the prompt for each
    greedy: bool  # the reply greedy decoding writes among them; else the likeliest


@dataclass(frozen=True)
class _Turn:
    text: str  # the conversation as the chat template renders it
    seed: int | None  # its episode's draws for this turn (agentcli.policy.streams); None: none


@dataclass
class _Prompt:
    request_index: int
    text: str
    token_ids: list[int]
    seed: int | None


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
        decoder: Decoder = "own",
        load_in_background: bool = False,
    ) -> None:
        _check_settings(max_new_tokens, batch_size, temperature)
        model_path = Path(model_path)
        _require_model_directory(model_path)  # refused now, not by the first turn
        self.model_path: Path | None = model_path
        self.decoder = decoder
        self._configure(max_new_tokens, temperature, seed, batch_size)

        def load() -> None:
            self._take(*_load(model_path, device, decoder), max_context_tokens)

        self._loading: Future[None] | None = None
        if load_in_background:
            self._loading = _in_worker_thread(load, name=f"load {model_path}")
        else:
            load()

    @classmethod
    def of_loaded(
        cls,
        model: Any,
        tokenizer: Any,
        *,
        max_new_tokens: int = 128,
        temperature: float = 0.0,
        seed: int = 0,
        batch_size: int = 32,
    ) -> LocalModelPolicy:
        """A policy acting with a model already in memory (a trainer's, between updates), as
        it is: its attention stays what it trains with (our decode loop runs it through
        SDPA). Its kept caches hold that model's keys: build a policy per set of weights."""
        _check_settings(max_new_tokens, batch_size, temperature)
        policy = cls.__new__(cls)
        policy.model_path = None  # no directory: the caller holds the model
        policy.decoder = "own"
        policy._configure(max_new_tokens, temperature, seed, batch_size)
        policy._loading = None
        policy._take(tokenizer, model, None)
        return policy

    def _configure(
        self, max_new_tokens: int, temperature: float, seed: int, batch_size: int
    ) -> None:
        """The settings, known before the model is loaded."""
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.seed = seed
        self.batch_size = batch_size
        self.generate_calls = 0  # how many batches went through the model
        self.prefill_tokens = 0  # prompt tokens encoded: those found in a kept cache are not
        self._model_lock = threading.Lock()
        self._batcher = Batcher(self._answer_turns, batch_size)
        self._ranker = Batcher(self._rank_batch, batch_size)

    def _take(self, tokenizer: Any, model: Any, max_context_tokens: int | None) -> None:
        """What needs the loaded model."""
        self.tokenizer, self.model = tokenizer, model
        self.max_context_tokens = max_context_tokens or model.config.max_position_embeddings
        # Two batches' worth: the rollout does not say when an episode ends.
        self._caches = KeptCaches(model, tokenizer, capacity=2 * self.batch_size)

    async def _loaded(self) -> None:
        """Waits, without blocking the event loop, until the model is loaded; a failed load
        raises ``FatalRunError``."""
        if self._loading is not None and not self._loading.done():
            # The episodes' sessions are open and reset by now: they wait here for the weights.
            await asyncio.wrap_future(self._loading)
        self.wait_until_loaded()

    def wait_until_loaded(self) -> None:
        """Blocks until the model is loaded (at once if it was loaded in the constructor);
        a failed load raises ``FatalRunError``: no turn can be answered."""
        if self._loading is None:
            return
        try:
            self._loading.result()
        except AgentGymError as exc:
            raise FatalRunError(str(exc)) from exc
        except Exception as exc:
            raise FatalRunError(f"loading the model at {self.model_path} failed: {exc}") from exc

    async def act(
        self, conversation: Sequence[ChatMessage], session: RemoteSession | None = None
    ) -> Reply:
        await self._loaded()
        # Rendered now, while other episodes still wait on their env steps, rather than once
        # the batch is complete.
        turn = _Turn(self._render(conversation), turn_seed(self.seed))
        return await self._batcher.answer(turn)

    async def rank(
        self, conversation: Sequence[ChatMessage], replies: Sequence[str], *, greedy: bool
    ) -> Reply:
        """The one of ``replies`` (whole turns) the model finds likeliest after
        ``conversation`` (its tokens' log-probabilities summed) or, with ``greedy``, the one
        greedy decoding writes when it may write only those; each reply's tokens, up to the
        end of its turn, are scored as the model's continuation of the prompt
        (``agentcli.policy.local.scoring``), with the turns of other episodes in one batch;
        the first listed of those that tie. Nothing is generated: the tokens read are the
        reply's prompt tokens."""
        await self._loaded()
        prompt = self._render(conversation)
        continuations = [self._continuation(conversation, prompt, reply) for reply in replies]
        return await self._ranker.answer(_Ranking(prompt, list(replies), continuations, greedy))

    def _rank_batch(self, rankings: list[_Ranking]) -> list[Reply]:
        from agentcli.policy.local.scoring import (
            continuation_token_log_probs,
            greedy_along,
            likeliest,
        )

        replies: list[Reply | None] = [None] * len(rankings)
        prompts, rows, scored = [], [], []
        for index, ranking in enumerate(rankings):
            prompt = self.tokenizer(ranking.prompt, add_special_tokens=False)["input_ids"]
            options = self.tokenizer(ranking.continuations, add_special_tokens=False)["input_ids"]
            if len(prompt) + max(len(option) for option in options) > self.max_context_tokens:
                replies[index] = Reply("", prompt_tokens=len(prompt), context_exceeded=True)
            else:
                prompts.append(prompt)
                rows.append(options)
                scored.append(index)
        if scored:
            with self._model_lock:
                scores = continuation_token_log_probs(
                    self.model, prompts, rows, pad_token_id=self.tokenizer.pad_token_id,
                    chunk=RANKED_ROWS_PER_FORWARD,
                )  # fmt: skip
            for index, prompt, options, own in zip(scored, prompts, rows, scores, strict=True):
                read = len(prompt) + sum(len(option) for option in options)
                choose = greedy_along if rankings[index].greedy else likeliest
                chosen = rankings[index].replies[choose(options, own)]
                replies[index] = Reply(chosen, prompt_tokens=read)
        return [reply for reply in replies if reply is not None]  # every slot is filled

    def _continuation(self, conversation: Sequence[ChatMessage], prompt: str, reply: str) -> str:
        """What the chat template writes after ``prompt`` (the conversation opened for the
        model's turn) when ``reply`` is that turn: the reply and the end of its turn."""
        answered = [*conversation, ChatMessage(role="assistant", content=reply)]
        text = self.tokenizer.apply_chat_template(chat_dicts(answered), tokenize=False)
        if not text.startswith(prompt):
            raise FatalRunError(
                f"{self.model_path}'s chat template writes a turn otherwise than after the prompt"
                " it opens for it, so its replies cannot be scored: use actions admissible"
            )
        return text[len(prompt) :]

    async def aclose(self) -> None:
        """Stop batching; turns still waiting are cancelled rather than left hanging."""
        await self._batcher.aclose()
        await self._ranker.aclose()

    def generate(self, conversations: Sequence[Sequence[ChatMessage]]) -> list[Reply]:
        """Answer several conversations as one batch (blocking).

        Conversations that would not fit the context get ``context_exceeded`` and take no
        part in the batch.
        """
        self.wait_until_loaded()
        return self._answer_turns(
            [_Turn(self._render(conversation), None) for conversation in conversations]
        )

    def _answer_turns(self, turns: list[_Turn]) -> list[Reply]:
        replies: list[Reply | None] = [None] * len(turns)
        prompts: list[_Prompt] = []
        encoded = self._encode([turn.text for turn in turns])
        for index, (turn, token_ids) in enumerate(zip(turns, encoded, strict=True)):
            if len(token_ids) + self.max_new_tokens > self.max_context_tokens:
                replies[index] = Reply("", prompt_tokens=len(token_ids), context_exceeded=True)
            else:
                prompts.append(_Prompt(index, turn.text, token_ids, turn.seed))
        if prompts:
            for prompt, reply in zip(prompts, self._generate(prompts), strict=True):
                replies[prompt.request_index] = reply
        return [reply for reply in replies if reply is not None]  # every slot is filled

    def _render(self, conversation: Sequence[ChatMessage]) -> str:
        return self.tokenizer.apply_chat_template(
            chat_dicts(conversation), tokenize=False, add_generation_prompt=True
        )

    def _encode(self, texts: list[str]) -> list[list[int]]:
        """The tokens of each conversation's text."""
        with self._model_lock:  # a batch in flight changes the kept turns
            starts = [self._caches.encoded_start(text) for text in texts]
        # One call for all: the tokenizer encodes a batch on several threads. The template
        # writes the special tokens itself.
        rests = self.tokenizer(
            [text[length:] for text, (_, length) in zip(texts, starts, strict=True)],
            add_special_tokens=False,
        )["input_ids"]
        return [start + rest for (start, _), rest in zip(starts, rests, strict=True)]

    def _generate(self, prompts: list[_Prompt]) -> list[Reply]:
        import torch

        width = max(len(prompt.token_ids) for prompt in prompts)
        pads = [width - len(prompt.token_ids) for prompt in prompts]
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
            # A row of an episode draws from its episode's stream; one outside an episode
            # (``generate``'s) from its place in the batch, the caller's own choice.
            seeds = [
                derived_seed(self.seed, "batch", self.generate_calls, row)
                if prompt.seed is None
                else prompt.seed
                for row, prompt in enumerate(prompts)
            ]
            self.generate_calls += 1
            if self.decoder == "own":
                decoded = self._decode(prompts, pads, input_ids, attention_mask, seeds)
            else:
                decoded = self._decode_with_generate(
                    prompts, input_ids, attention_mask, derived_seed(*seeds)
                )
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

    def _decode(
        self,
        prompts: list[_Prompt],
        pads: list[int],
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        seeds: list[int],
    ) -> Decoded:
        """Our decode loop, from the kept caches; keeps each row's cache for its next turn;
        sampling, each row draws from a generator seeded with its seed."""
        import torch

        from agentcli.policy.decode import decode

        width = input_ids.shape[1]
        rows = [prompt.token_ids for prompt in prompts]
        batch = self._caches.batch_cache(rows, pads, width + self.max_new_tokens)
        self.prefill_tokens += batch.prefilled
        self.prefill_tokens += sum(min(width - batch.start, len(ids)) for ids in rows)
        generators = None
        if self.temperature > 0:
            device = self.model.device
            generators = [torch.Generator(device).manual_seed(seed) for seed in seeds]
        decoded = decode(
            self.model,
            input_ids,
            attention_mask,
            batch.cache,
            max_new_tokens=self.max_new_tokens,
            eos_token_id=self.tokenizer.eos_token_id,
            pad_token_id=self.tokenizer.pad_token_id,
            ends_turn=self._ends_action_line,
            temperature=self.temperature,
            generators=generators,
        )
        self._caches.keep(
            [prompt.text for prompt in prompts],
            [len(ids) for ids in rows],
            pads,
            torch.cat([input_ids, decoded.tokens], dim=1),
            batch.cache,
        )
        return decoded

    def _decode_with_generate(
        self,
        prompts: list[_Prompt],
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        seed: int,
    ) -> Decoded:
        """transformers' ``generate``, the whole prompt encoded: nothing is kept; sampling, the
        batch draws from one generator (``seed``), so a row's draws depend on its batch."""
        from agentcli.policy.local.reference import generate

        self.prefill_tokens += sum(len(prompt.token_ids) for prompt in prompts)
        return generate(
            self.model,
            input_ids,
            attention_mask,
            max_new_tokens=self.max_new_tokens,
            eos_token_id=self.tokenizer.eos_token_id,
            pad_token_id=self.tokenizer.pad_token_id,
            ends_turn=self._ends_action_line,
            temperature=self.temperature,
            seed=seed,
        )

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


def _check_settings(max_new_tokens: int, batch_size: int, temperature: float) -> None:
    if max_new_tokens < 1 or batch_size < 1 or temperature < 0:
        raise UsageError(
            "max_new_tokens and batch_size must be at least 1 and temperature at least 0"
        )


def _require_model_directory(model_path: Path) -> None:
    if not (model_path / "config.json").is_file():
        raise ModelUnavailableError(
            f"{model_path} is not a model directory (no config.json); build one with "
            "`agentgym model tiny --out DIR` or pass a trained checkpoint"
        )


def _in_worker_thread(work: Callable[[], None], *, name: str) -> Future[None]:
    """``work`` run in a daemon thread (a run stopped early does not wait for it to end)."""
    future: Future[None] = Future()

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # handed to whoever waits for the model
            future.set_exception(exc)
        else:
            future.set_result(None)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


def _load(model_path: Path, device: Device, decoder: Decoder) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agentcli.policy.decode import use_decode_attention

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
    if decoder == "own":  # the reference runs the model as transformers configures it
        use_decode_attention(model)
    model.eval()
    return tokenizer, model
