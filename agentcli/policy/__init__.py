"""Policies: a local model (batched), an OpenAI-compatible endpoint, or the env's oracle."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, model_validator

from agentcli.config import CommandConfig
from agentcli.endpoints import with_kind
from agentcli.policy.base import Policy


class PolicySettings(CommandConfig):
    """How a policy acts: an endpoint (``openai``: ``base_url`` and ``model_name``), a local
    model directory given elsewhere (``local``), or the env's expert (``oracle``).

    Left unsaid, the kind follows from what is given: a ``base_url`` means an endpoint,
    anything else a local model. One rule, so that YAML, environment variables and flags agree.
    """

    kind: Literal["local", "openai", "oracle"] = Field(
        "local", description="local: a model directory; openai: an endpoint; oracle: the expert."
    )
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint, e.g. .../v1.")
    model_name: str | None = Field(None, description="Model name at the endpoint.")
    api_key: SecretStr | None = Field(None, description="Endpoint key (else OPENAI_API_KEY).")
    max_new_tokens: int = Field(128, ge=1, description="Tokens per reply at most.")
    temperature: float = Field(0.0, ge=0, description="0 = greedy.")
    seed: int = 0
    batch_size: int = Field(32, ge=1, description="Local model: turns per batch.")
    decoder: Literal["own", "generate"] = Field(
        "own",
        description="own: our batched decode loop with kept caches; generate: transformers'"
        " model.generate per batch, the reference.",
    )
    timeout_s: float = Field(120.0, gt=0, description="Endpoint: seconds to wait for a reply.")
    max_retries: int = Field(
        4,
        ge=0,
        description="Endpoint: retries of a request after a 408/409/429/5xx, timeout or drop.",
    )

    @model_validator(mode="before")
    @classmethod
    def _infer_kind(cls, data: Any) -> Any:
        return with_kind(data, otherwise="local")

    @model_validator(mode="after")
    def _endpoint_complete(self) -> PolicySettings:
        if self.kind == "openai" and not (self.base_url and self.model_name):
            raise ValueError("an openai policy needs --base-url and --model-name")
        return self


class PolicyConfig(PolicySettings):
    """Who acts: ``PolicySettings`` and, for a local policy, its model directory."""

    model: Path | None = Field(None, description="Local model directory (HF format).")

    @model_validator(mode="after")
    def _model_given(self) -> PolicyConfig:
        if self.kind == "local" and self.model is None:
            raise ValueError(
                "say who acts: --model DIR (a local model), --base-url URL --model-name NAME"
                " (an endpoint), or --policy oracle (the env's expert)"
            )
        return self


def build_policy(config: PolicyConfig, *, concurrency: int) -> Policy:
    if config.kind == "oracle":
        from agentcli.policy.oracle import OraclePolicy

        return OraclePolicy()
    if config.kind == "openai":
        from agentcli.endpoints import api_key
        from agentcli.policy.openai_endpoint import OpenAIPolicy

        return OpenAIPolicy(
            config.base_url,
            config.model_name,
            api_key=api_key(config.api_key),
            concurrency=concurrency,
            max_tokens=config.max_new_tokens,
            temperature=config.temperature,
            seed=config.seed,
            timeout_s=config.timeout_s,
            max_retries=config.max_retries,
        )
    from agentcli.policy.local import LocalModelPolicy

    return LocalModelPolicy(
        config.model,
        max_new_tokens=config.max_new_tokens,
        temperature=config.temperature,
        seed=config.seed,
        batch_size=config.batch_size,
        decoder=config.decoder,
    )
