"""Completion masks: exactly the trained messages' tokens, for several templates and lengths."""

from __future__ import annotations

import pytest

from agentcli.conversation import ACKNOWLEDGEMENT
from agentcli.errors import DataFormatError
from agentcli.models import SMOLLM2_SYSTEM, chatml_template
from agentcli.records import ChatMessage, ChatRecord
from agentcli.train.tokenize import prompt_as_trained, tokenize_conversation, tokenize_records

# Llama-3's shape, unlike ChatML: a bos token, a default system prompt, role headers as their
# own special tokens, content trimmed, and no {% generation %} markers.
HEADER_TEMPLATE = (
    "{{- bos_token }}"
    "{%- if messages[0]['role'] != 'system' %}"
    "{{- '<|start_header_id|>system<|end_header_id|>\\n\\nYou are an agent.<|eot_id|>' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}"
    "{{- message['content'] | trim }}{{- '<|eot_id|>' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{%- endif %}"
)

ACTION_1 = "Thought: I need the ingredients first.\nAction: get 1 oak log"
ACTION_2 = "Thought: Now I can craft the planks.\nAction: craft 4 oak planks using 1 oak log\n"
CONVERSATION = [
    ChatMessage(role="user", content="Craft 4 oak planks. Goal: oak planks."),
    ChatMessage(role="assistant", content=ACKNOWLEDGEMENT, loss=False),
    ChatMessage(role="user", content="Crafting commands:\ncraft 4 oak planks using 1 oak log"),
    ChatMessage(role="assistant", content=ACTION_1, loss=True),
    ChatMessage(role="user", content="Got 1 oak log"),
    ChatMessage(role="assistant", content=ACTION_2),  # loss None on an assistant: trained
]


@pytest.fixture(scope="module")
def load_tokenizer(tiny_model):
    from transformers import AutoTokenizer

    def load(template: str | None = None):
        tokenizer = AutoTokenizer.from_pretrained(tiny_model)
        if template == "smollm2":
            tokenizer.chat_template = chatml_template(SMOLLM2_SYSTEM)
        elif template == "header":
            tokenizer.add_special_tokens(
                {
                    "bos_token": "<|begin_of_text|>",
                    "additional_special_tokens": [
                        "<|start_header_id|>",
                        "<|end_header_id|>",
                        "<|eot_id|>",
                    ],
                }
            )
            tokenizer.chat_template = HEADER_TEMPLATE
        return tokenizer

    return load


def trained_runs(tokenizer, example) -> list[str]:
    """The decoded text of each run of consecutive trained tokens."""
    runs: list[list[int]] = []
    previous = 0
    for token, trained in zip(example.input_ids, example.completion_mask, strict=True):
        if trained and not previous:
            runs.append([])
        if trained:
            runs[-1].append(token)
        previous = trained
    return [tokenizer.decode(run) for run in runs]


@pytest.mark.parametrize(
    ("template", "end_of_turn", "trims"),
    [
        ("tiny", "<|im_end|>", False),
        ("smollm2", "<|im_end|>", False),
        ("header", "<|eot_id|>", True),
    ],
)
def test_chat_mask_is_exactly_the_trained_turns(load_tokenizer, template, end_of_turn, trims):
    tokenizer = load_tokenizer(template)
    example = tokenize_conversation(tokenizer, CONVERSATION)

    rendered = tokenizer.apply_chat_template([m.model_dump(exclude={"loss"}) for m in CONVERSATION])
    assert example.input_ids == rendered["input_ids"]  # the model's own template, token for token
    expected = [
        (action.strip() if trims else action) + end_of_turn for action in (ACTION_1, ACTION_2)
    ]
    assert trained_runs(tokenizer, example) == expected
    assert ACKNOWLEDGEMENT not in tokenizer.decode(
        [t for t, m in zip(example.input_ids, example.completion_mask, strict=True) if m]
    )
    assert example.truncated_turns == 0


def test_smollm2_template_keeps_its_default_system_prompt_untrained(load_tokenizer):
    tokenizer = load_tokenizer("smollm2")
    example = tokenize_conversation(tokenizer, CONVERSATION)
    assert SMOLLM2_SYSTEM in tokenizer.decode(example.input_ids)
    assert all(SMOLLM2_SYSTEM not in run for run in trained_runs(tokenizer, example))


def test_llama2_reproduces_agentgym_strings(load_tokenizer):
    tokenizer = load_tokenizer("tiny")  # no bos token: AgentGym's literal <s>; eos <|im_end|>
    example = tokenize_conversation(tokenizer, CONVERSATION, template="llama2")

    user_1, ack, user_2, _, user_3, _ = (m.content for m in CONVERSATION)
    assert tokenizer.decode(example.input_ids) == (
        f"<s>[INST] {user_1} [/INST]{ack}<|im_end|>"
        f"<s>[INST] {user_2} [/INST]{ACTION_1}<|im_end|>"
        f"<s>[INST] {user_3} [/INST]{ACTION_2}<|im_end|>"
    )
    assert trained_runs(tokenizer, example) == [ACTION_1 + "<|im_end|>", ACTION_2 + "<|im_end|>"]


def test_agentgym_bc_reproduces_bc_trainers_tokens(load_tokenizer):
    """AgentGym's BCTrainer (``tokenize_fn`` in bc_trainer.py) encodes each human turn as
    ``encode(f"<s>[INST] {value} [/INST]")`` and each gpt turn as ``encode(f" {value}")``
    followed by the eos id, every call without special tokens; the literal ``<s>`` whatever the
    tokenizer's bos."""
    for kind in ("tiny", "header"):
        tokenizer = load_tokenizer(kind)
        example = tokenize_conversation(tokenizer, CONVERSATION, template="agentgym-bc")
        expected = []
        for message in CONVERSATION:
            if message.role == "user":
                text = "<s>[INST] " + message.content + " [/INST]"
                expected += tokenizer.encode(text, add_special_tokens=False)
            else:
                expected += tokenizer.encode(" " + message.content, add_special_tokens=False)
                expected.append(tokenizer.eos_token_id)
        assert example.input_ids == expected
    # llama2's one difference: the space before each reply
    tokenizer = load_tokenizer("tiny")
    example = tokenize_conversation(tokenizer, CONVERSATION, template="agentgym-bc")
    assert trained_runs(tokenizer, example) == [
        " " + ACTION_1 + "<|im_end|>",
        " " + ACTION_2 + "<|im_end|>",
    ]


@pytest.mark.parametrize("template", ["llama2", "agentgym-bc"])
@pytest.mark.parametrize("kind", ["tiny", "header"])
def test_a_model_trained_in_an_inst_format_is_prompted_with_the_tokens_it_trained_on(
    load_tokenizer, template, kind
):
    """Rollout renders each turn with the saved chat template and encodes the text whole:
    what it gives the model before each reply is exactly training's tokens before that reply."""
    tokenizer = load_tokenizer(kind)
    trained = tokenize_conversation(tokenizer, CONVERSATION, template=template)
    assert trained is not None
    prompt_as_trained(tokenizer, template)
    replies = [turn for turn, m in enumerate(CONVERSATION) if m.role == "assistant"]
    for turn in replies:
        messages = [{"role": m.role, "content": m.content} for m in CONVERSATION[:turn]]
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        prompt = tokenizer(text, add_special_tokens=False)["input_ids"]
        assert prompt == trained.input_ids[: len(prompt)]
        assert trained.completion_mask[len(prompt) - 1] == 0  # the reply starts right after
    # and the whole conversation renders as training's text
    whole = [{"role": m.role, "content": m.content} for m in CONVERSATION]
    text = tokenizer.apply_chat_template(whole, tokenize=False)
    assert tokenizer(text, add_special_tokens=False)["input_ids"] == trained.input_ids


def test_llama2_uses_the_tokenizers_own_bos(load_tokenizer):
    tokenizer = load_tokenizer("header")  # bos <|begin_of_text|>
    example = tokenize_conversation(tokenizer, CONVERSATION[:2], template="llama2")
    assert example.input_ids[0] == tokenizer.bos_token_id
    assert example.input_ids.count(tokenizer.bos_token_id) == 1


def test_llama2_refuses_a_system_message(load_tokenizer):
    messages = [ChatMessage(role="system", content="Be brief."), *CONVERSATION]
    with pytest.raises(DataFormatError, match="message 0 is a system message"):
        tokenize_conversation(load_tokenizer("tiny"), messages, template="llama2")


def long_conversation(exchanges: int) -> list[ChatMessage]:
    messages = CONVERSATION[:2]
    for step in range(exchanges):
        messages.append(ChatMessage(role="user", content=f"Observation {step}: you see a chest."))
        messages.append(
            ChatMessage(
                role="assistant", content=f"Thought: step {step}.\nAction: open chest {step}"
            )
        )
    return messages


@pytest.mark.parametrize("template", ["tiny", "header", "llama2"])
def test_truncate_left_removes_whole_early_exchanges_and_keeps_masks_exact(
    load_tokenizer, template
):
    tokenizer = load_tokenizer("tiny" if template == "llama2" else template)
    kind = "llama2" if template == "llama2" else "chat"
    messages = long_conversation(12)
    full = tokenize_conversation(tokenizer, messages, template=kind)
    max_length = len(full.input_ids) * 2 // 3

    example = tokenize_conversation(tokenizer, messages, template=kind, max_length=max_length)

    assert len(example.input_ids) <= max_length
    removed = example.truncated_turns
    assert removed > 0 and removed % 2 == 0  # whole user / assistant exchanges
    kept = messages[:2] + messages[2 + removed :]
    # Exactly the kept conversation's tokens; removing one exchange fewer would not fit.
    alone = tokenize_conversation(tokenizer, kept, template=kind)
    assert (example.input_ids, example.completion_mask) == (alone.input_ids, alone.completion_mask)
    one_fewer = messages[:2] + messages[removed:]
    assert len(tokenize_conversation(tokenizer, one_fewer, template=kind).input_ids) > max_length
    assert tokenizer.decode(example.input_ids).count(CONVERSATION[0].content) == 1
    end_of_turn = "<|eot_id|>" if template == "header" else "<|im_end|>"
    assert trained_runs(tokenizer, example) == [
        m.content + end_of_turn for m in kept if m.role == "assistant" and m.loss is not False
    ]


def test_report_counts_truncated_and_dropped(load_tokenizer):
    tokenizer = load_tokenizer("tiny")
    short = CONVERSATION[:4]
    long = long_conversation(12)
    # The last exchange alone is too long for max_length: no truncation can save it.
    hopeless = [
        *CONVERSATION[:2],
        ChatMessage(role="user", content="chest " * 200),
        CONVERSATION[3],
    ]
    max_length = len(tokenize_conversation(tokenizer, long).input_ids) // 2
    assert len(tokenize_conversation(tokenizer, short).input_ids) < max_length
    records = [
        ChatRecord(item_id=f"textcraft_{i}", messages=messages)
        for i, messages in enumerate([short, long, hopeless])
    ]

    examples, report = tokenize_records(tokenizer, records, max_length=max_length)
    assert (report.total, report.truncated, report.dropped) == (3, 1, 1)
    assert [e.truncated_turns > 0 for e in examples] == [False, True]
    assert report.summary() == (
        f"3 conversations, 1 left-truncated, 1 dropped (longer than max_length {max_length})"
    )

    examples, report = tokenize_records(tokenizer, records, max_length=max_length, overflow="drop")
    assert (len(examples), report.truncated, report.dropped) == (1, 0, 2)
    assert tokenize_records(tokenizer, records)[1].summary() == "3 conversations"


def test_truncation_drops_what_would_leave_nothing_trained(load_tokenizer):
    tokenizer = load_tokenizer("tiny")
    # Only the first action is trained: cutting it off leaves nothing to learn.
    messages = [
        *CONVERSATION[:4],
        *[m.model_copy(update={"loss": False}) for m in long_conversation(12)[2:]],
    ]
    full = tokenize_conversation(tokenizer, messages)
    assert tokenize_conversation(tokenizer, messages, max_length=len(full.input_ids) - 1) is None


def test_a_template_that_repeats_content_is_refused_with_the_item(load_tokenizer):
    tokenizer = load_tokenizer("tiny")
    tokenizer.chat_template = (
        "{% for m in messages %}{{ m['content'] }}|{{ m['content'] }}\n{% endfor %}"
    )
    record = ChatRecord(item_id="textcraft_3", messages=CONVERSATION)
    with pytest.raises(
        DataFormatError, match=r"^textcraft_3: the chat template writes a message twice"
    ):
        tokenize_records(tokenizer, [record])


def test_a_template_that_refuses_the_conversation_says_why(load_tokenizer):
    tokenizer = load_tokenizer("tiny")
    tokenizer.chat_template = (
        "{% for m in messages %}{% if (m['role'] == 'user') != loop.index0 is even %}"
        "{{ raise_exception('roles must alternate user/assistant') }}{% endif %}"
        "{{ m['content'] }}\n{% endfor %}"
    )
    record = ChatRecord(item_id="textcraft_5", messages=[CONVERSATION[0], *CONVERSATION[2:]])
    with pytest.raises(
        DataFormatError, match=r"^textcraft_5: the chat template refuses .*alternate"
    ):
        tokenize_records(tokenizer, [record])
