"""An evaluator that calls the model the way AgentGym's does, for the benchmarks to measure
agentgym against: `rollout.py` runs it in its own process after a warm-up, `eval_process.py`
as a process of its own, start-up included.

AgentGym's evaluator (`agentenv/controller/task.py`, `_generate_experience_one`) plays one
episode at a time on one env session it resets for each item, and every turn calls
`model.generate` with batch 1 on the whole conversation, re-encoded from its first token (no
batching, no reuse of an earlier turn's work); greedy, stopping at the end-of-turn token or
the token cap, as its `GenerationConfig(do_sample=False)` does. It loads the model and
tokenizer with `AutoModelForCausalLM` and `AutoTokenizer`, imported at the top.

Where this differs from AgentGym, it is so that both sides send the model the same tokens and
must produce the same actions: it renders the conversation with the model's chat template
(AgentGym hard-codes Llama-2 `[INST]` text) and re-renders and re-tokenizes all of it every
turn (AgentGym appends each new message's tokens, which costs the same model work); it caps
replies at `max_new_tokens` (AgentGym: 4096 tokens in all); it ends an episode, as agentgym
does, once the conversation and a reply no longer fit the model's positions (AgentGym goes on
past them, which a model with learned positions cannot); and it reads replies as agentgym does
(the text up to the end of the action line, `agentcli.conversation.parse_reply`).

As a process (the actions of each item go to `--out` as JSON, `{item: [action, ...]}`):

    .venv/bin/python bench/agentgym_evaluator.py --env-server URL --model DIR \
        --items 0,1,2 --max-rounds 20 --max-new-tokens 32 --out actions.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig
from transformers.utils import logging as transformers_logging

from agentcli.conversation import (
    DEFAULT_VIEW,
    chat_dicts,
    cut_after_action,
    env_opening,
    invalid_reply_observation,
    observation_text,
    parse_reply,
    student_messages,
)
from agentcli.envs.base import Transition
from agentcli.envs.textcraft import SPEC
from agentcli.envs.wire.client import EnvClient, RemoteSession
from agentcli.records import ChatMessage, Step


class AgentGymStyleAgent:
    """A model called the way AgentGym's evaluator calls it: one whole conversation a turn."""

    def __init__(self, model_dir: Path, max_new_tokens: int, device: str) -> None:
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
        self.model = model.to(device).eval()
        self.config = GenerationConfig(
            max_new_tokens=max_new_tokens,
            do_sample=False,
            eos_token_id=self.tokenizer.eos_token_id,
            pad_token_id=self.tokenizer.pad_token_id,
        )
        self.new_tokens = 0

    def reply(self, conversation: list[ChatMessage]) -> str | None:
        """The reply's text; None if the conversation and a reply do not fit the model."""
        text = self.tokenizer.apply_chat_template(
            chat_dicts(conversation), tokenize=False, add_generation_prompt=True
        )
        prompt = self.tokenizer(text, add_special_tokens=False, return_tensors="pt")
        room = self.model.config.max_position_embeddings - self.config.max_new_tokens
        if prompt["input_ids"].shape[1] > room:
            return None
        prompt = prompt.to(self.model.device)
        with torch.inference_mode():
            output = self.model.generate(**prompt, generation_config=self.config)
        completion = output[0, prompt["input_ids"].shape[1] :].tolist()
        self.new_tokens += len(completion)
        return cut_after_action(self.tokenizer.decode(completion, skip_special_tokens=True))


async def episode_actions(
    agent: AgentGymStyleAgent, session: RemoteSession, index: int, max_rounds: int
) -> list[str]:
    """One textcraft episode on ``session``, reset to ``index``: the actions it took."""
    opening = env_opening(SPEC.name, SPEC.instruction, DEFAULT_VIEW)
    last = await session.reset(index)
    observation = observation_text(last, first=True, style=opening.style)
    steps: list[Step] = []
    for _ in range(max_rounds):
        text = agent.reply(student_messages(opening, steps, observation, DEFAULT_VIEW))
        if text is None:
            break
        parsed = parse_reply(text)
        if parsed.error:
            last = Transition(observation=invalid_reply_observation(parsed.error))
        else:
            last = await session.step(parsed.action)
        steps.append(Step(observation=observation, reason=parsed.thought, action=parsed.action))
        if last.done:
            break
        observation = observation_text(last, first=False, style=opening.style)
    return [step.action for step in steps]


def evaluate(
    agent: AgentGymStyleAgent, url: str, items: list[int], max_rounds: int
) -> dict[int, list[str]]:
    """Each item's actions, the items played one after the other on one session."""

    async def run() -> dict[int, list[str]]:
        async with EnvClient(url, SPEC.name) as client:
            session = await client.open()  # AgentGym keeps one env and resets it per item
            actions = {
                index: await episode_actions(agent, session, index, max_rounds) for index in items
            }
            await session.close()
        return actions

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--env-server", required=True, help="a textcraft server's URL")
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--items", required=True, help="textcraft item indices, comma-separated")
    parser.add_argument("--max-rounds", type=int, default=20)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--out", type=Path, required=True, help="JSON: each item's actions")
    args = parser.parse_args()
    transformers_logging.disable_progress_bar()  # the bars of weight loading, on stderr
    agent = AgentGymStyleAgent(args.model, args.max_new_tokens, args.device)
    items = [int(index) for index in args.items.split(",")]
    actions = evaluate(agent, args.env_server, items, args.max_rounds)
    args.out.write_text(json.dumps({str(index): taken for index, taken in actions.items()}))


if __name__ == "__main__":
    main()
