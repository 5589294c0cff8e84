"""The environment's expert as a policy: ``collect`` is a rollout with it."""

from __future__ import annotations

from agentcli.data.records import assistant_text
from agentcli.envs.client import RemoteSession
from agentcli.policy.base import Message, Reply

EXPERT_REASON = "I follow the expert plan for this task."


class OraclePolicy:
    """Asks the env server for the expert's next action from the episode's current state."""

    name = "oracle"

    async def act(self, conversation: list[Message], session: RemoteSession) -> Reply:
        action = await session.expert_action()
        # No expert action leaves the Action line empty: the engine records a format error.
        return Reply(text=assistant_text(EXPERT_REASON, action or ""))

    async def aclose(self) -> None:
        return None
