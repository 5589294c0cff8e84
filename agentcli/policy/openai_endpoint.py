"""A model behind any OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, Ollama)."""

from __future__ import annotations

import asyncio
from typing import Any

from agentcli.envs.client import RemoteSession
from agentcli.errors import ModelEndpointError, UnreachableError
from agentcli.policy.base import Message, Reply


class OpenAIPolicy:
    """Chat completions with at most ``concurrency`` requests in flight and bounded retries.

    The ``openai`` client retries connection errors, 408/409/429 and 5xx with backoff
    (``max_retries`` times); what still fails ends the episode with the error recorded.
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
        from openai import AsyncOpenAI

        self.name = f"openai:{model_name}"
        self.base_url = base_url
        self.model_name = model_name
        self._client = AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "EMPTY",  # local servers (vLLM, Ollama) accept any key
            timeout=timeout_s,
            max_retries=max_retries,
        )
        self._slots = asyncio.Semaphore(concurrency)
        self._sampling: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature}
        if seed is not None:
            self._sampling["seed"] = seed

    async def act(self, conversation: list[Message], session: RemoteSession) -> Reply:
        import openai

        async with self._slots:
            try:
                completion = await self._client.chat.completions.create(
                    model=self.model_name, messages=conversation, **self._sampling
                )
            except openai.APIConnectionError as exc:
                raise UnreachableError(
                    f"cannot reach the model endpoint at {self.base_url} ({exc}); "
                    "check --base-url and that the server is running"
                ) from exc
            except openai.AuthenticationError as exc:
                raise ModelEndpointError(
                    f"the model endpoint at {self.base_url} refused the API key; "
                    "set OPENAI_API_KEY or --api-key"
                ) from exc
            except openai.BadRequestError as exc:
                if "context" in str(exc).lower() or "too long" in str(exc).lower():
                    return Reply(text="", context_exceeded=True)
                raise ModelEndpointError(f"the model endpoint rejected the request: {exc}") from exc
            except openai.APIStatusError as exc:
                raise ModelEndpointError(
                    f"the model endpoint at {self.base_url} failed with HTTP {exc.status_code} "
                    "after retries"
                ) from exc
        usage = completion.usage
        return Reply(
            text=completion.choices[0].message.content or "",
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
        )

    async def aclose(self) -> None:
        await self._client.close()
