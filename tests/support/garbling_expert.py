"""An env's expert whose every action is garbled the same way, played over a real server: what
``policy.actions: admissible`` should map back to the expert's own actions."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from agentcli.conversation import StudentView, turn_text
from agentcli.data.jsonl import read_records
from agentcli.envs.registry import get_spec
from agentcli.policy.base import Reply
from agentcli.records import Episode
from agentcli.rollout import run_rollout


class GarblingExpert:
    """The env's expert, each action passed through ``garble`` (``fallback`` when it has none)."""

    name = "garbling-expert"

    def __init__(self, garble: Callable[[str], str], fallback: str) -> None:
        self.garble, self.fallback = garble, fallback

    async def act(self, conversation, session) -> Reply:
        return Reply(
            text=turn_text("", self.garble(await session.expert_action() or self.fallback))
        )

    async def aclose(self) -> None:
        return None


def play_garbled(env: str, url: str, out, expert: GarblingExpert, items: Sequence[int],
                 actions: str, max_rounds: int | None = None) -> list[Episode]:  # fmt: skip
    """The expert's episodes on ``items`` of the train split, in item order."""
    asyncio.run(
        run_rollout(
            get_spec(env), [url], expert, items, out, split="train", concurrency=2,
            max_rounds=max_rounds, view=StudentView(), actions=actions,
        )
    )  # fmt: skip
    return sorted(read_records(out, Episode), key=lambda episode: episode.item_id)
