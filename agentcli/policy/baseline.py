"""The environment's rule baseline as a policy (``EnvSpec.baseline``): what a learned policy
is measured beside, e.g. webshop's search-click-buy template."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agentcli.conversation import turn_text
from agentcli.envs.wire.client import RemoteSession
from agentcli.policy.base import Reply
from agentcli.records import ChatMessage

BASELINE_REASON = "I follow the rule baseline."


class BaselinePolicy:
    """Acts on the session's current observation alone, by the env's rule."""

    name = "baseline"

    def __init__(self, rule: Callable[[str], str]) -> None:
        self._rule = rule

    async def act(self, conversation: Sequence[ChatMessage], session: RemoteSession) -> Reply:
        return Reply(text=turn_text(BASELINE_REASON, self._rule(session.observation)))

    async def aclose(self) -> None:
        return None
