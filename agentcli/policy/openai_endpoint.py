"""A model behind any OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, Ollama)."""

from __future__ import annotations

import asyncio
from typing import Any

from agentcli.envs.client import RemoteSession
from agentcli.errors import (
    FatalRunError,
    ModelAuthError,
    ModelEndpointError,
    UnreachableError,
)
from agentcli.policy.base import Message, Reply


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
        self._timeout_s = timeout_s
        self._tries = max_retries + 1
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
            except openai.APITimeoutError as exc:  # before APIConnectionError, its base class
                raise ModelEndpointError(
                    f"the model endpoint at {self.base_url} did not answer within "
                    f"{self._timeout_s:g} s, {self._tries} times in a row; "
                    "the server may be overloaded: lower --concurrency"
                ) from exc
            except openai.APIConnectionError as exc:
                raise UnreachableError(
                    f"cannot reach the model endpoint at {self.base_url} ({exc}); "
                    "check --base-url and that the server is running"
                ) from exc
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise ModelAuthError(
                    f"the model endpoint at {self.base_url} refused the API key "
                    f"(HTTP {exc.status_code}); set OPENAI_API_KEY or policy.api_key=KEY"
                ) from exc
            except openai.NotFoundError as exc:
                raise FatalRunError(
                    f"the model endpoint at {self.base_url} has no {self.model_name!r} "
                    f"(HTTP 404: {_server_message(exc)}); check --base-url (it usually ends "
                    "in /v1) and --model-name"
                ) from exc
            except openai.BadRequestError as exc:
                if _is_context_overflow(exc):
                    return Reply(text="", context_exceeded=True)
                raise ModelEndpointError(
                    f"the model endpoint rejected the request: {_server_message(exc)}"
                ) from exc
            except openai.APIStatusError as exc:
                tries = f" ({self._tries} tries)" if _is_retried(exc.status_code) else ""
                raise ModelEndpointError(
                    f"the model endpoint at {self.base_url} answered HTTP {exc.status_code}"
                    f"{tries}: {_server_message(exc)}"
                ) from exc
        usage = completion.usage
        return Reply(
            text=completion.choices[0].message.content or "",
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
        )

    async def aclose(self) -> None:
        await self._client.close()


def _is_retried(status: int) -> bool:
    """What the ``openai`` client retries by itself (its ``_should_retry``)."""
    return status in (408, 409, 429) or status >= 500


def _is_context_overflow(exc: Exception) -> bool:
    """vLLM, SGLang and OpenAI word it differently; all name the context length or say
    the input is too long."""
    text = str(exc).lower()
    return any(marker in text for marker in ("context length", "context_length", "too long"))


def _server_message(exc: Any) -> str:
    """The message an ``openai.APIStatusError`` carries from the server (OpenAI's
    ``{"error": {"message": ...}}``), on one line."""
    body = exc.body
    message = body.get("message") if isinstance(body, dict) else None
    return " ".join(str(message or exc).split())
