"""Privileged teachers: annotate demos, extract privileged state, correct student episodes.

``build_teacher`` makes the one a config asks for: an LLM behind any OpenAI-compatible
endpoint (``openai``) or the environment's own oracle (``oracle``, built-in envs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, model_validator

from agentcli.config import CommandConfig
from agentcli.endpoints import with_kind
from agentcli.teacher.base import Teacher


class Price(CommandConfig):
    """What a model costs, in US dollars per million tokens."""

    input: float = Field(ge=0, description="$ per 1M prompt tokens.")
    output: float = Field(ge=0, description="$ per 1M completion tokens.")


# OpenAI's list prices when this was written; a config's `prices` adds to and overrides them.
DEFAULT_PRICES = {
    "gpt-4o": Price(input=2.50, output=10.00),
    "gpt-4o-mini": Price(input=0.15, output=0.60),
}


class TeacherConfig(CommandConfig):
    """Who teaches. ``openai`` needs ``base_url`` and ``model_name``; ``oracle`` needs a
    built-in environment.

    Left unsaid, the kind follows from what is given: a ``base_url`` means an LLM at that
    endpoint, nothing the env's oracle. One rule, so that YAML, environment variables and
    flags agree.
    """

    kind: Literal["openai", "oracle"] = Field(
        "oracle", description="openai: an LLM at an endpoint; oracle: the env's simulator."
    )
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint, e.g. .../v1.")
    model_name: str | None = Field(None, description="Model name at the endpoint.")
    api_key: SecretStr | None = Field(None, description="Endpoint key (else OPENAI_API_KEY).")
    concurrency: int = Field(16, ge=1, description="Records (and requests) in flight at once.")
    max_retries: int = Field(
        4, ge=0, description="Retries of one request after a 408/409/429/5xx, timeout or drop."
    )
    max_repairs: int = Field(
        2, ge=0, description="Times an unusable reply is sent back with what is wrong with it."
    )
    timeout_s: float = Field(120.0, gt=0, description="Seconds to wait for one reply.")
    max_tokens: int = Field(2048, ge=1, description="Tokens per reply at most.")
    temperature: float = Field(0.0, ge=0, description="0 = greedy.")
    structured_output: bool = Field(
        True, description="Send the reply's JSON schema (response_format); off if refused."
    )
    prices: dict[str, Price] = Field(
        default_factory=dict, description="Model name → $ per 1M tokens, over the defaults."
    )
    max_cost: float | None = Field(
        None, gt=0, description="Stop before a call could take the ledger's total past this ($)."
    )
    dry_run: bool = Field(False, description="Estimate the cost from token counts; send nothing.")
    cache_dir: Path | None = Field(
        None, description="Where replies are cached; default: beside the output."
    )

    @model_validator(mode="before")
    @classmethod
    def _infer_kind(cls, data: Any) -> Any:
        return with_kind(data, otherwise="oracle")

    @model_validator(mode="after")
    def _complete(self) -> TeacherConfig:
        if self.kind == "openai" and not (self.base_url and self.model_name):
            raise ValueError("an openai teacher needs --base-url and --model-name")
        return self

    def price_table(self) -> dict[str, Price]:
        return {**DEFAULT_PRICES, **self.prices}


def build_teacher(config: TeacherConfig, env: str, *, ledger: Path, cache: Path) -> Teacher:
    """The teacher ``config`` asks for; an LLM teacher logs every call to ``ledger`` and
    caches every reply in ``cache`` (``config.cache_dir`` wins when set)."""
    if config.kind == "oracle":
        from agentcli.teacher.oracle import OracleTeacher

        return OracleTeacher(env)
    from agentcli.teacher.llm import LLMTeacher
    from agentcli.teacher.llm_client import TeacherClient

    if config.cache_dir is not None:
        cache = config.cache_dir / "responses.jsonl"
    return LLMTeacher(TeacherClient(config, ledger=ledger, cache=cache))
