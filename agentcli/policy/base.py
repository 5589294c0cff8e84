"""Who acts in an episode: the interface the rollout engine drives.

A policy answers one episode's turn at a time (``act``); policies that batch (a local
model) gather the turns that concurrent episodes ask for and answer them together, so
the engine needs no batching logic of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from agentcli.envs.wire.client import RemoteSession
    from agentcli.records import ChatMessage


@dataclass(frozen=True)
class Reply:
    """The policy's text for one turn (``Thought: ... Action: ...``) and what it cost."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    context_exceeded: bool = False  # the conversation no longer fits the model: end the episode


class Policy(Protocol):
    name: str  # recorded in Episode.meta["policy"]

    async def act(self, conversation: Sequence[ChatMessage], session: RemoteSession) -> Reply:
        """The next turn for an episode whose messages so far are ``conversation``.

        ``session`` is the episode's live env session (the oracle asks it for the expert's
        action; model policies ignore it).
        """
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class RankingPolicy(Policy, Protocol):
    """A policy that can also choose among whole replies (``policy.actions: ranked`` or
    ``constrained``)."""

    async def rank(
        self, conversation: Sequence[ChatMessage], replies: Sequence[str], *, greedy: bool
    ) -> Reply:
        """The one of ``replies`` (each a whole turn) that the policy finds likeliest after
        ``conversation`` or, with ``greedy``, that greedy decoding restricted to them writes;
        the first of those that tie."""
        ...
