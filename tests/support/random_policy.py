"""A student that acts at random, through the real rollout engine and env servers: the
deliberately bad episodes that teacher and dataset tests correct.

Each turn it picks, with a seeded RNG keyed by the episode's text so far, one of the actions
the observations offer (babyai's "Available actions"; for textcraft, the listed crafting
commands, a "get" of one of their ingredients, or "inventory"), and now and then a reply with
no action at all, which the engine records as an invalid reply.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path

from agentcli.conversation import StudentView
from agentcli.data.jsonl import read_records
from agentcli.envs.registry import get_spec
from agentcli.envs.wire.launcher import env_servers
from agentcli.policy.base import Policy, Reply
from agentcli.records import ChatMessage, Episode
from agentcli.rollout import run_rollout

AVAILABLE = "Available actions: "  # babyai lists them so
NO_ACTION = "I am not sure what to do here.\nLet me think again."
_INGREDIENT = re.compile(r"\d+ ([a-z ]+)")


def textcraft_actions(shown: str) -> list[str]:
    """The actions a textcraft conversation offers: its listed crafting commands (in the
    first observation, when shown), "get"s of their ingredients, and "inventory"."""
    lines = dict.fromkeys(shown.splitlines())
    commands = [line for line in lines if line.startswith("craft ")]
    ingredients = {
        match[1].strip()
        for command in commands
        for match in _INGREDIENT.finditer(command.split(" using ", 1)[1])
    }
    gets = [f"get {count} {item}" for item in sorted(ingredients) for count in (1, 2, 4)]
    return [*commands, *gets, "inventory"]


class RandomPolicy:
    name = "random"

    def __init__(self, seed: int = 0, invalid_rate: float = 0.1) -> None:
        self.seed = seed
        self.invalid_rate = invalid_rate

    async def act(self, conversation, session) -> Reply:
        history = "\n".join(message.content for message in conversation)
        rng = random.Random(f"{self.seed}\n{history}")
        if rng.random() < self.invalid_rate:
            return Reply(text=NO_ACTION)
        last = conversation[-1].content
        offered = next((line for line in last.splitlines() if line.startswith(AVAILABLE)), None)
        if offered is not None:
            actions = json.loads(offered.removeprefix(AVAILABLE))
        else:
            actions = textcraft_actions(history)
        return Reply(text=f"Thought: I try something.\nAction: {rng.choice(actions)}")

    async def aclose(self) -> None:
        return None


class RecordingPolicy(RandomPolicy):
    """A random student that keeps every conversation the rollout shows it, in turn order."""

    def __init__(self, seed: int = 0, invalid_rate: float = 0.1) -> None:
        super().__init__(seed=seed, invalid_rate=invalid_rate)
        self.shown: list[list[ChatMessage]] = []

    async def act(self, conversation, session) -> Reply:
        self.shown.append(list(conversation))
        return await super().act(conversation, session)


def rollout(
    env: str,
    items: list[int],
    out: Path,
    policy: Policy,
    view: StudentView | None = None,
    urls: list[str] | None = None,
) -> list[Episode]:
    """Episodes of ``policy`` on ``items``, through the env servers at ``urls`` (default: a
    built-in one started for them)."""
    spec = get_spec(env)
    with env_servers(spec, urls or []) as serving:
        asyncio.run(
            run_rollout(
                spec, serving, policy, items, out, split="train", concurrency=8,
                meta={"iteration": 0}, view=view,
            )
        )  # fmt: skip
    return read_records(out, Episode)
