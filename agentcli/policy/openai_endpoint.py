"""A model behind any OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, Ollama), or
behind several replicas of one."""

from __future__ import annotations

import asyncio
import itertools
import weakref
from collections.abc import Sequence
from typing import Any

from agentcli.conversation import chat_dicts
from agentcli.endpoints import async_client, endpoint_error, is_context_overflow
from agentcli.envs.wire.client import RemoteSession
from agentcli.policy.base import Reply
from agentcli.records import ChatMessage


class OpenAIPolicy:
    """Chat completions with at most ``concurrency`` requests in flight and bounded retries.

    The ``openai`` client retries connection errors, timeouts, 408/409/429 and 5xx with
    backoff (``max_retries`` times). An endpoint that cannot be reached stops the rollout
    (``UnreachableError``); any other failure ends the episode with the error recorded, and a
    conversation longer than the model's context ends it as ``context_exceeded``.

    With several ``base_urls`` (replicas serving the same model), each episode's env session
    is given the next replica and keeps it, so that the replica's prefix cache still holds
    the conversation when the episode's next turn comes.
    """

    def __init__(
        self,
        base_urls: Sequence[str],
        model_name: str,
        *,
        label: str = "openai",
        api_key: str | None = None,
        concurrency: int = 16,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 4,
    ) -> None:
        self.name = f"{label}:{model_name}"
        self.base_urls = list(base_urls)
        self.model_name = model_name
        self._clients = [
            async_client(url, api_key, timeout_s=timeout_s, max_retries=max_retries)
            for url in self.base_urls
        ]
        self._turns = itertools.cycle(range(len(self._clients)))
        self._replica_of: weakref.WeakKeyDictionary[RemoteSession, int] = (
            weakref.WeakKeyDictionary()
        )
        self._timeout_s = timeout_s
        self._tries = max_retries + 1
        self._slots = asyncio.Semaphore(concurrency)
        self._sampling: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature}
        if seed is not None:
            self._sampling["seed"] = seed

    def _replica(self, session: RemoteSession | None) -> int:
        if session is None:  # a caller without an episode (tests, probes)
            return next(self._turns)
        if session not in self._replica_of:
            self._replica_of[session] = next(self._turns)
        return self._replica_of[session]

    async def act(self, conversation: Sequence[ChatMessage], session: RemoteSession) -> Reply:
        import openai

        replica = self._replica(session)
        async with self._slots:
            try:
                completion = await self._clients[replica].chat.completions.create(
                    model=self.model_name, messages=chat_dicts(conversation), **self._sampling
                )
            except openai.OpenAIError as exc:
                if isinstance(exc, openai.BadRequestError) and is_context_overflow(exc):
                    return Reply(text="", context_exceeded=True)
                raise endpoint_error(
                    exc,
                    base_url=self.base_urls[replica],
                    model_name=self.model_name,
                    timeout_s=self._timeout_s,
                    tries=self._tries,
                    key_setting="policy.api_key",
                ) from exc
        usage = completion.usage
        return Reply(
            text=completion.choices[0].message.content or "",
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
        )

    async def aclose(self) -> None:
        for client in self._clients:
            await client.close()
