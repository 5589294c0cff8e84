"""Each episode's own stream of random draws.

A sampling policy answers the turns of many episodes in batches, and which turns share a
batch depends on when each episode's env step came back: on a loaded machine it varies from
run to run. Seeded per batch, an episode's replies would vary with it. Seeded per episode and
turn instead (``episode_stream`` around an episode, ``turn_seed`` at each of its turns), they
depend on the policy's seed, the episode and the turn only: the same run twice, or a run
resumed after a kill, samples the same replies.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class _EpisodeStream:
    key: str  # the episode's item and which play of it this is, e.g. "babyai-putnext:1000#2"
    turns: int = 0  # turns drawn for so far


_current: ContextVar[_EpisodeStream | None] = ContextVar("episode_stream", default=None)


@contextmanager
def episode_stream(key: str) -> Iterator[None]:
    """The turns asked for inside draw from episode ``key``'s stream (an asyncio task's
    context: concurrent episodes each run in their own)."""
    token = _current.set(_EpisodeStream(key))
    try:
        yield
    finally:
        _current.reset(token)


def turn_seed(seed: int) -> int | None:
    """The seed of the current episode's next turn, under the policy's ``seed``; None outside
    an episode."""
    stream = _current.get()
    if stream is None:
        return None
    stream.turns += 1
    return derived_seed(seed, stream.key, stream.turns)


def derived_seed(*parts: object) -> int:
    """A seed for ``torch.Generator.manual_seed`` (63 bits) that depends on ``parts`` only."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1
