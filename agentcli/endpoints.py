"""What every caller of an OpenAI-compatible endpoint shares: the key, the client, and one
line for each way the endpoint can fail.

The rollout's ``OpenAIPolicy`` and the LLM teacher's client both talk to such endpoints
(OpenAI, vLLM, SGLang, Ollama); they differ in what they retry and what a failure means to
them, not in how a failure is described.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from agentcli.errors import (
    AgentGymError,
    FatalRunError,
    ModelAuthError,
    ModelEndpointError,
    UnreachableError,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI


@dataclass(frozen=True)
class ModelEndpoints:
    """Where a model answers: one base URL (``.../v1``) per replica, all serving
    ``model_name``. A configured endpoint has one; an engine a stage launched, one per replica
    (``agentcli.policy.engine_server``)."""

    base_urls: tuple[str, ...]
    model_name: str


def with_kind(data: Any, *, otherwise: str) -> Any:
    """Config data (of a policy or a teacher) with its ``kind`` filled in when left unsaid: a
    ``base_url`` means an endpoint (``openai``), its absence ``otherwise``. The one rule for
    YAML, environment variables and flags alike."""
    if isinstance(data, dict) and data.get("kind") is None:
        return {**data, "kind": "openai" if data.get("base_url") else otherwise}
    return data


def api_key(configured: SecretStr | None) -> str | None:
    """The key from the config, else ``OPENAI_API_KEY``, else None."""
    return configured.get_secret_value() if configured else os.environ.get("OPENAI_API_KEY")


def async_client(
    base_url: str, key: str | None, *, timeout_s: float, max_retries: int
) -> AsyncOpenAI:
    from openai import AsyncOpenAI

    return AsyncOpenAI(
        base_url=base_url,
        api_key=key or "EMPTY",  # local servers (vLLM, Ollama) accept any key
        timeout=timeout_s,
        max_retries=max_retries,
    )


def is_retried(status: int) -> bool:
    """Statuses worth another try (what the ``openai`` client retries by itself)."""
    return status in (408, 409, 429) or status >= 500


def is_context_overflow(exc: Exception) -> bool:
    """vLLM, SGLang and OpenAI word it differently; all name the context length or say
    the input is too long."""
    text = str(exc).lower()
    return any(marker in text for marker in ("context length", "context_length", "too long"))


def server_message(exc: Any) -> str:
    """The message an ``openai.APIStatusError`` carries from the server (OpenAI's
    ``{"error": {"message": ...}}``), on one line."""
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    return " ".join(str(message or exc).split())


def endpoint_error(
    exc: Exception,
    *,
    base_url: str,
    model_name: str,
    timeout_s: float,
    tries: int,
    key_setting: str,
) -> AgentGymError:
    """One of our typed errors for an ``openai`` exception, after ``tries`` attempts;
    ``key_setting`` is the config key that holds the API key (``policy.api_key``).

    An endpoint out of reach, a refused key or an unknown model is fatal (no request can
    succeed); anything else is a ``ModelEndpointError`` for the one request.
    """
    import openai

    if isinstance(exc, openai.APITimeoutError):  # before APIConnectionError, its base class
        return ModelEndpointError(
            f"the model endpoint at {base_url} did not answer within {timeout_s:g} s, "
            f"{tries} times in a row; the server may be overloaded: lower --concurrency"
        )
    if isinstance(exc, openai.APIConnectionError):
        return UnreachableError(
            f"cannot reach the model endpoint at {base_url} ({exc}); "
            "check --base-url and that the server is running"
        )
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return ModelAuthError(
            f"the model endpoint at {base_url} refused the API key "
            f"(HTTP {exc.status_code}); set OPENAI_API_KEY or {key_setting}=KEY"
        )
    if isinstance(exc, openai.NotFoundError):
        return FatalRunError(
            f"the model endpoint at {base_url} has no {model_name!r} "
            f"(HTTP 404: {server_message(exc)}); check --base-url (it usually ends "
            "in /v1) and --model-name"
        )
    if isinstance(exc, openai.BadRequestError):
        return ModelEndpointError(f"the model endpoint rejected the request: {server_message(exc)}")
    if isinstance(exc, openai.APIStatusError):
        attempts = f" ({tries} tries)" if is_retried(exc.status_code) else ""
        return ModelEndpointError(
            f"the model endpoint at {base_url} answered HTTP {exc.status_code}"
            f"{attempts}: {server_message(exc)}"
        )
    return ModelEndpointError(f"the model endpoint at {base_url} failed: {server_message(exc)}")
