"""Conversations to token ids and a completion mask that is 1 exactly on the tokens trained.

A message is trained when it is the assistant's and its ``loss`` is not false
(``datasets.is_trained``); user and system messages never are. Two ways to write the text:

- ``chat``: the model's own chat template (``tokenizer.apply_chat_template``), so training
  sees what ``rollout`` and ``eval`` prompt the model with. A trained message contributes its
  content and the end-of-turn text the template writes after it (``<|im_end|>`` in ChatML,
  without the newline that separates turns), never the role header before it.
- ``llama2``: AgentGym's [INST] format as its inference template writes it, each turn
  tokenized on its own: ``<s>[INST] {user} [/INST]`` and ``{assistant}</s>``, with the
  tokenizer's own bos / eos where it has them. A trained message contributes its whole
  ``{assistant}</s>``.
- ``agentgym-bc``: AgentGym's BCTrainer, token for token: ``<s>[INST] {user} [/INST]`` (a
  literal ``<s>``) and `` {assistant}`` (one space first) followed by the eos token's id. The
  space is llama2's one difference: one more token per reply on Llama-2's tokenizer.

How the mask is found for any template, with or without ``{% generation %}`` markers, in
time linear in the conversation: the conversation is rendered once with each message's
content replaced by a sentinel, which gives the template's own text around every message
(headers, default system prompt, end-of-turn markers), and once for real. Walking the real
text with that surrounding text locates each message's content, even where the template
transforms it (``| trim``). The end-of-turn text is what the template writes after an
assistant message both when it is last and when a message follows. The text is then
tokenized once, with offsets, and a token is trained when any of its characters is: BPE
merges across a boundary therefore never leave a trained character untrained.

Sequences longer than ``max_length`` are never cut at the end. ``drop`` leaves them out;
``truncate_left`` removes whole exchanges (a user message and the assistant's replies) from
the start until the rest fits, always keeping the opening: the system messages, the first
user message (the task instruction) and the assistant's replies to it, because the later
actions mean nothing without the task. When the opening and the last exchange alone are too
long, or nothing trained would be left, the conversation is dropped.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal

from agentcli.errors import DataFormatError, UsageError
from agentcli.records import ChatMessage, ChatRecord
from agentcli.train.datasets import is_trained

Template = Literal["chat", "llama2", "agentgym-bc"]
Overflow = Literal["truncate_left", "drop"]

# Private-use characters: no template writes them, and ``| trim`` leaves them alone.
_SENTINEL = "\ue000{}\ue001"
_SENTINELS = re.compile("\ue000([0-9]+)\ue001")


@dataclass(frozen=True)
class TokenizedExample:
    input_ids: list[int]
    completion_mask: list[int]  # 1 on the tokens of trained messages, 0 elsewhere
    truncated_turns: int = 0  # early messages removed to fit max_length


@dataclass
class TokenizeReport:
    total: int
    truncated: int
    dropped: int
    max_length: int | None = None

    def summary(self) -> str:
        if self.max_length is None:
            return f"{self.total} conversations"
        return (
            f"{self.total} conversations, {self.truncated} left-truncated, {self.dropped} dropped"
            f" (longer than max_length {self.max_length})"
        )


@dataclass(frozen=True)
class _Encoded:
    input_ids: list[int]
    completion_mask: list[int]
    message_tokens: list[int]  # per message: the tokens it brings, its template text included


_Encoder = Callable[[Any, Sequence[ChatMessage]], _Encoded]


def tokenize_conversation(
    tokenizer: Any,
    messages: Sequence[ChatMessage],
    *,
    template: Template = "chat",
    max_length: int | None = None,
    overflow: Overflow = "truncate_left",
) -> TokenizedExample | None:
    """Token ids and completion mask of one conversation; None when it is dropped."""
    encode = _ENCODERS[template]
    encoded = encode(tokenizer, messages)
    if max_length is None or len(encoded.input_ids) <= max_length:
        return TokenizedExample(encoded.input_ids, encoded.completion_mask)
    if overflow == "drop":
        return None
    return _truncate_left(tokenizer, list(messages), encoded, encode, max_length)


def tokenize_records(
    tokenizer: Any,
    records: Iterable[ChatRecord],
    *,
    template: Template = "chat",
    max_length: int | None = None,
    overflow: Overflow = "truncate_left",
) -> tuple[list[TokenizedExample], TokenizeReport]:
    """Every record tokenized; the report counts the truncated and the dropped."""
    examples = []
    report = TokenizeReport(total=0, truncated=0, dropped=0, max_length=max_length)
    for record in records:
        report.total += 1
        try:
            example = tokenize_conversation(
                tokenizer,
                record.messages,
                template=template,
                max_length=max_length,
                overflow=overflow,
            )
        except DataFormatError as error:
            raise DataFormatError(f"{record.item_id}: {error}") from None
        if example is None:
            report.dropped += 1
            continue
        report.truncated += example.truncated_turns > 0
        examples.append(example)
    if report.total and not examples:
        raise DataFormatError(
            f"every conversation was dropped ({report.summary()}): raise --max-length, or"
            " pass --overflow truncate_left to drop early turns instead"
        )
    return examples, report


# --- chat template ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Placed:
    """Where one message landed in the rendered text."""

    start: int  # where the previous message's content ends: its end of turn counts here
    content_start: int
    content_end: int


def _encode_chat(tokenizer: Any, messages: Sequence[ChatMessage]) -> _Encoded:
    if not tokenizer.chat_template:
        raise UsageError(
            "the tokenizer has no chat template — use a model that ships one, or --template llama2"
        )
    text, placed = _place(tokenizer, messages)
    end_of_turn = _end_of_turn_after_assistant(tokenizer)
    spans = []
    for index, where in enumerate(placed):
        if not is_trained(messages[index]):
            continue
        if where is None:
            raise _unalignable(f"leaves out message {index}, which is trained")
        following = (p.content_start for p in placed[index + 1 :] if p is not None)
        after = text[where.content_end : next(following, len(text))]
        written = len(os.path.commonprefix([after, end_of_turn]).rstrip())
        spans.append((where.content_start, where.content_end + written))

    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    input_ids = list(encoding["input_ids"])
    token_starts = [start for start, _ in encoding["offset_mapping"]]
    token_ends = [end for _, end in encoding["offset_mapping"]]
    mask = [0] * len(input_ids)
    for span_start, span_end in spans:
        token = bisect_right(token_ends, span_start)  # the first token ending after span_start
        while token < len(input_ids) and token_starts[token] < span_end:
            mask[token] = 1
            token += 1

    # A message's tokens are those starting between the end of the previous content and the
    # end of its own: what removing it from the conversation would roughly remove.
    boundaries = [where.start for where in placed if where is not None] + [len(text)]
    first_tokens = [bisect_left(token_starts, boundary) for boundary in boundaries]
    first_tokens[0], first_tokens[-1] = 0, len(input_ids)
    counts = iter(later - earlier for earlier, later in pairwise(first_tokens))
    message_tokens = [0 if where is None else next(counts) for where in placed]
    return _Encoded(input_ids, mask, message_tokens)


def _place(tokenizer: Any, messages: Sequence[ChatMessage]) -> tuple[str, list[_Placed | None]]:
    """The rendered text, and where each message's header and content are in it.

    A message the template does not write (some drop system messages) is placed nowhere.
    """
    skeleton = _render(
        tokenizer,
        [
            {"role": message.role, "content": _SENTINEL.format(i)}
            for i, message in enumerate(messages)
        ],
    )
    parts = _SENTINELS.split(skeleton)
    surrounding, order = parts[0::2], [int(index) for index in parts[1::2]]
    if order != sorted(set(order)):
        raise _unalignable("writes a message twice or out of order")
    text = _render(tokenizer, [{"role": m.role, "content": m.content} for m in messages])

    placed: list[_Placed | None] = [None] * len(messages)
    position = 0
    for number, index in enumerate(order):
        before, after = surrounding[number], surrounding[number + 1]
        if not text.startswith(before, position):
            raise _unalignable(f"writes message {index} differently around its real content")
        start, position = position, position + len(before)
        content = messages[index].content
        last = number == len(order) - 1
        if text.startswith(content + after, position):
            end = position + len(content)
        elif last:
            end = len(text) - len(after) if text.endswith(after) else -1
        else:  # the template changed the content (``| trim``): it ends where its surroundings do
            end = text.find(after, position) if after else -1
        if end < position:
            raise _unalignable(f"writes message {index} differently around its real content")
        placed[index] = _Placed(start, position, end)
        position = end
    if text[position:] != surrounding[-1]:
        raise _unalignable("ends the conversation differently around its real content")
    return text, placed


def _end_of_turn_after_assistant(tokenizer: Any) -> str:
    """What the template writes after an assistant message that ends the conversation."""
    probe = [{"role": "user", "content": _SENTINEL.format(0)}]
    probe.append({"role": "assistant", "content": _SENTINEL.format(1)})
    return _render(tokenizer, probe).rpartition(_SENTINEL.format(1))[2]


def _render(tokenizer: Any, messages: list[dict[str, str]]) -> str:
    from jinja2 import TemplateError

    try:
        return tokenizer.apply_chat_template(messages, tokenize=False)
    except TemplateError as error:
        raise DataFormatError(
            f"the chat template refuses the conversation ({error}) — fix the conversation or"
            " use --template llama2"
        ) from None


def _unalignable(what: str) -> DataFormatError:
    return DataFormatError(
        f"the chat template {what}, so its tokens cannot be matched to messages — use"
        " --template llama2 or a template that writes each message's content as given"
    )


# --- AgentGym's llama2 format ----------------------------------------------------------------


def _encode_llama2(tokenizer: Any, messages: Sequence[ChatMessage]) -> _Encoded:
    bos = tokenizer.bos_token or "<s>"
    eos = tokenizer.eos_token or "</s>"
    return _encode_turns(
        tokenizer, messages, user=f"{bos}[INST] {{}} [/INST]", assistant="{}" + eos, end=[]
    )


def _encode_agentgym_bc(tokenizer: Any, messages: Sequence[ChatMessage]) -> _Encoded:
    """AgentGym's BCTrainer (``bc_trainer.py``, ``tokenize_fn``): a literal ``<s>`` before every
    user turn, and each assistant turn a space, its content, then the eos token's id."""
    if tokenizer.eos_token_id is None:
        raise UsageError(
            "the tokenizer has no eos token, which AgentGym's BC format ends every reply with"
            " — use a model whose tokenizer has one, or --template chat"
        )
    return _encode_turns(
        tokenizer,
        messages,
        user="<s>[INST] {} [/INST]",
        assistant=" {}",
        end=[tokenizer.eos_token_id],
    )


def _encode_turns(
    tokenizer: Any, messages: Sequence[ChatMessage], *, user: str, assistant: str, end: list[int]
) -> _Encoded:
    """Each turn tokenized on its own, as AgentGym's trainer does: its content in ``user`` or
    ``assistant`` (``{}`` marks where), an assistant turn followed by the ids ``end``."""
    texts = []
    for number, message in enumerate(messages):
        if message.role == "system":
            raise DataFormatError(
                f"message {number} is a system message, which AgentGym's [INST] format has no"
                " place for — use --template chat, or make it part of the first user message"
            )
        texts.append((user if message.role == "user" else assistant).format(message.content))
    pieces = tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []
    input_ids, mask, counts = [], [], []
    for message, piece in zip(messages, pieces, strict=True):
        piece = piece + (end if message.role == "assistant" else [])
        input_ids += piece
        mask += [int(is_trained(message))] * len(piece)
        counts.append(len(piece))
    return _Encoded(input_ids, mask, counts)


# The chat template a model trained in an [INST] format is saved with, so that rollout, eval
# and a served engine prompt it as it was trained: the same text, turn after turn, ending
# where its reply starts (``tests/unit/train/test_tokenize.py`` checks the tokens match).
_INST_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'user' -%}{{ USER }}"
    "{%- elif message['role'] == 'assistant' -%}{{ ASSISTANT }}"
    "{%- else -%}{{ raise_exception('a system message has no place in AgentGym\\'s [INST]"
    " format: make it part of the first user message') }}"
    "{%- endif -%}{%- endfor -%}"
)
INFERENCE_TEMPLATES: dict[str, str] = {
    "llama2": _INST_TEMPLATE.replace(
        "{{ USER }}", "{{ (bos_token or '<s>') + '[INST] ' + message['content'] + ' [/INST]' }}"
    ).replace("{{ ASSISTANT }}", "{{ message['content'] + (eos_token or '</s>') }}"),
    "agentgym-bc": _INST_TEMPLATE.replace(
        "{{ USER }}", "{{ '<s>[INST] ' + message['content'] + ' [/INST]' }}"
    ).replace("{{ ASSISTANT }}", "{{ ' ' + message['content'] + eos_token }}"),
}


def prompt_as_trained(tokenizer: Any, template: Template) -> None:
    """Give ``tokenizer`` the chat template that prompts a model the way ``template`` trained
    it; ``chat`` trains with the tokenizer's own, which stays."""
    if template != "chat":
        tokenizer.chat_template = INFERENCE_TEMPLATES[template]


_ENCODERS: dict[str, _Encoder] = {
    "chat": _encode_chat,
    "llama2": _encode_llama2,
    "agentgym-bc": _encode_agentgym_bc,
}


# --- fitting max_length ----------------------------------------------------------------------


def _truncate_left(
    tokenizer: Any,
    messages: list[ChatMessage],
    encoded: _Encoded,
    encode: _Encoder,
    max_length: int,
) -> TokenizedExample | None:
    opening = _opening_end(messages)
    exchanges = [i for i in range(opening + 1, len(messages)) if messages[i].role == "user"]
    # Keep messages[:opening] + messages[cut:], for ever later cuts; the token counts of the
    # full rendering say which cut should fit, and the re-rendered result decides.
    removed = sum(encoded.message_tokens[opening : exchanges[0]]) if exchanges else 0
    for cut, following in pairwise([*exchanges, len(messages)]):
        kept = messages[:opening] + messages[cut:]
        if not any(is_trained(message) for message in kept):
            return None
        if len(encoded.input_ids) - removed <= max_length:
            result = encode(tokenizer, kept)
            if len(result.input_ids) <= max_length:
                return TokenizedExample(result.input_ids, result.completion_mask, cut - opening)
        removed += sum(encoded.message_tokens[cut:following])
    return None


def _opening_end(messages: Sequence[ChatMessage]) -> int:
    """The end of the opening kept by truncation: system messages, the first user message
    and the assistant's replies to it."""
    end = 0
    while end < len(messages) and messages[end].role == "system":
        end += 1
    if end < len(messages) and messages[end].role == "user":
        end += 1
    while end < len(messages) and messages[end].role == "assistant":
        end += 1
    return end
