"""A model behind any OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, Ollama)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from agentcli.conversation import chat_dicts
from agentcli.data.records import ChatMessage
from agentcli.endpoints import async_client, endpoint_error, is_context_overflow
from agentcli.envs.client import RemoteSession
from agentcli.policy.base import Reply


class OpenAIPolicy:
    """Chat completions with at most ``concurrency`` requests in flight and bounded retries.

    The ``openai`` client retries connection errors, timeouts, 408/409/429 and 5xx with
    backoff (``max_retries`` times). An endpoint that cannot be reached stops the rollout
    (``UnreachableError``); any other failure ends the episode with the error recorded, and a
    conversation longer than the model's context ends it as ``context_exceeded``.
    """

    def __init__(
        self,
        base_url: str,
        model_name: str,
        *,
        api_key: str | None = None,
        concurrency: int = 16,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 4,
    ) -> None:
        self.name = f"openai:{model_name}"
        self.base_url = base_url
        self.model_name = model_name
        self._client = async_client(base_url, api_key, timeout_s=timeout_s, max_retries=max_retries)
        self._timeout_s = timeout_s
        self._tries = max_retries + 1
        self._slots = asyncio.Semaphore(concurrency)
        self._sampling: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature}
        if seed is not None:
            self._sampling["seed"] = seed

    async def act(self, conversation: Sequence[ChatMessage], session: RemoteSession) -> Reply:
        import openai

        async with self._slots:
            try:
                completion = await self._client.chat.completions.create(
                    model=self.model_name, messages=chat_dicts(conversation), **self._sampling
                )
            except openai.OpenAIError as exc:
                if isinstance(exc, openai.BadRequestError) and is_context_overflow(exc):
                    return Reply(text="", context_exceeded=True)
                raise endpoint_error(
                    exc,
                    base_url=self.base_url,
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
        await self._client.close()
