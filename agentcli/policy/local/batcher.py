"""Gathering the turns that many episodes ask for into batches, answered in a worker thread.

Each turn is put on a queue, and its episode waits. One batching task takes the waiting turns
(up to ``batch_size``, waiting a little for the turns the last batch answered and lingering a
few ms for stragglers) and has them answered in a worker thread, so the event loop keeps
stepping the other episodes meanwhile. Turns that arrive during a batch form the next one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from agentcli.policy.base import Reply

# Episodes come back from their env steps a few ms apart (more on a loaded machine): a request
# arriving within this window of the previous one joins its batch rather than waiting for the
# next batch. The window grows with the time a batch takes, so that lingering never costs
# more than a small fraction of the batch a late request would otherwise wait for.
GATHER_WINDOW_S = 0.005
GATHER_WINDOW_FRACTION = 0.05
# The turns answered by a batch mostly come back (the episodes' next turns, or new episodes in
# their place) an env step later. A batch waits for as many, up to this fraction of a batch's
# time: a few turns that come back late would otherwise go in a small batch of their own and
# stay out of step with the others, each group then waiting on the other's batches.
RETURN_WAIT_FRACTION = 0.25


Turn = TypeVar("Turn")  # what a turn asks: its conversation's text, or that and replies to rank


@dataclass
class _Request(Generic[Turn]):
    turn: Turn
    future: asyncio.Future[Reply]


class Batcher(Generic[Turn]):
    """Answers turns in batches of up to ``batch_size`` with ``answer`` (blocking, run in a
    worker thread: the turns of a batch in, one reply each out)."""

    def __init__(self, answer: Callable[[list[Turn]], list[Reply]], batch_size: int) -> None:
        self._answer_turns = answer
        self._batch_size = batch_size
        self.last_batch_s = 0.0  # how long the last batch took
        self._last_batch_rows = 0  # and how many turns it answered
        self._queue: asyncio.Queue[_Request[Turn]] | None = None
        self._batcher: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def answer(self, turn: Turn) -> Reply:
        """The reply to one turn, once the batch it joins is answered."""
        queue = self._ensure_batcher()
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        await queue.put(_Request(turn, future))
        return await future

    async def aclose(self) -> None:
        """Stop batching; turns still waiting are cancelled rather than left hanging."""
        if self._batcher is not None:
            self._batcher.cancel()
            await asyncio.gather(self._batcher, return_exceptions=True)
        while self._queue is not None and not self._queue.empty():
            self._queue.get_nowait().future.cancel()
        self._batcher = self._queue = self._loop = None

    def _ensure_batcher(self) -> asyncio.Queue[_Request[Turn]]:
        # A queue and its batching task belong to one event loop; a policy reused under a new
        # loop (a second asyncio.run) starts afresh.
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._queue is None:
            self._loop, self._queue = loop, asyncio.Queue()
            self._batcher = loop.create_task(self._run_batches(self._queue))
        return self._queue

    async def _run_batches(self, queue: asyncio.Queue[_Request[Turn]]) -> None:
        batch: list[_Request[Turn]] = []
        loop = asyncio.get_running_loop()
        try:
            while True:
                batch = [await queue.get()]
                deadline = loop.time() + RETURN_WAIT_FRACTION * self.last_batch_s
                while len(batch) < min(self._last_batch_rows, self._batch_size):
                    try:
                        batch.append(await asyncio.wait_for(queue.get(), deadline - loop.time()))
                    except TimeoutError:
                        break
                window = max(GATHER_WINDOW_S, GATHER_WINDOW_FRACTION * self.last_batch_s)
                while len(batch) < self._batch_size:
                    if queue.empty():
                        await asyncio.sleep(window)
                        if queue.empty():
                            break
                    batch.append(queue.get_nowait())
                self._last_batch_rows = len(batch)
                await self._answer(batch)
        finally:  # cancelled (aclose): nobody will answer the turns in hand
            for request in batch:
                request.future.cancel()

    async def _answer(self, batch: list[_Request[Turn]]) -> None:
        batch = [request for request in batch if not request.future.done()]
        if not batch:
            return
        turns = [request.turn for request in batch]
        started = time.perf_counter()
        try:
            replies = await asyncio.to_thread(self._answer_turns, turns)
        except Exception as exc:  # the episodes record the failure; the batcher goes on
            for request in batch:
                if not request.future.done():
                    request.future.set_exception(exc)
            return
        finally:
            self.last_batch_s = time.perf_counter() - started
        for request, reply in zip(batch, replies, strict=True):
            if not request.future.done():
                request.future.set_result(reply)
