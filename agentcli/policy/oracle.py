"""The environment's expert as a policy: ``collect`` is a rollout with it."""

from __future__ import annotations

from collections.abc import Sequence

from agentcli.conversation import turn_text
from agentcli.envs.wire.client import RemoteSession
from agentcli.policy.base import Reply
from agentcli.records import ChatMessage

EXPERT_REASON = "I follow the expert plan for this task."


class OraclePolicy:
    """Asks the env server for the expert's next action from the episode's current state."""

    name = "oracle"

    async def act(self, conversation: Sequence[ChatMessage], session: RemoteSession) -> Reply:
        action = await session.expert_action()
        # No expert action leaves the Action line empty: the engine records a format error.
        return Reply(text=turn_text(EXPERT_REASON, action or ""))

    async def aclose(self) -> None:
        return None
