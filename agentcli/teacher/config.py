"""Who teaches and how it is asked: ``TeacherConfig`` and the prices its ledger counts with.

A leaf of the teacher package: the client and the ledger read it, and ``agentcli.teacher``
builds the teacher it names."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, model_validator

from agentcli.config import CommandConfig
from agentcli.endpoints import with_kind
from agentcli.policy.engine_server import ENGINES, EngineKind, EngineSettings

TeacherKind = Literal["openai", "oracle", EngineKind]  # Literal flattens EngineKind


class Price(CommandConfig):
    """What a model costs, in US dollars per million tokens."""

    input: float = Field(ge=0, description="$ per 1M prompt tokens.")
    output: float = Field(ge=0, description="$ per 1M completion tokens.")


# OpenAI's list prices when this was written; a config's `prices` adds to and overrides them.
DEFAULT_PRICES = {
    "gpt-4o": Price(input=2.50, output=10.00),
    "gpt-4o-mini": Price(input=0.15, output=0.60),
}


class _Teaching(CommandConfig):
    """Who teaches and how it is asked (``TeacherConfig`` adds how an engine is launched)."""

    kind: TeacherKind = Field(
        "oracle",
        description="Who teaches. openai: an LLM at an endpoint; vllm, sglang: its model"
        " (teacher.model) served by that engine, launched for the stage; oracle: the env's"
        " simulator. Unset: openai given a base URL, else oracle.",
    )
    base_url: str | None = Field(
        None, description="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1."
    )
    model_name: str | None = Field(None, description="Model name at the endpoint.")
    model: str | None = Field(
        None, description="vllm/sglang: the model the engine serves (a directory or a hub id)."
    )
    api_key: SecretStr | None = Field(None, description="Endpoint key (else OPENAI_API_KEY).")
    concurrency: int = Field(16, ge=1, description="Records (teacher calls) in flight at once.")
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
        None,
        gt=0,
        description="US dollars: stop before a call could take the ledger's total past this.",
    )
    dry_run: bool = Field(False, description="Estimate the cost from token counts; send nothing.")
    cache_dir: Path | None = Field(
        None, description="Where replies are cached; default: beside the output."
    )


class TeacherConfig(EngineSettings, _Teaching):  # in this order, the engine's settings list last
    """Who teaches. ``openai`` needs ``base_url`` and ``model_name``; ``vllm`` / ``sglang``
    need ``model``, which the stage serves with that engine; ``oracle`` needs a built-in
    environment.

    Left unsaid, the kind follows from what is given: a ``base_url`` means an LLM at that
    endpoint, nothing the env's oracle. One rule, so that YAML, environment variables and
    flags agree.
    """

    @model_validator(mode="before")
    @classmethod
    def _infer_kind(cls, data: Any) -> Any:
        return with_kind(data, otherwise="oracle")

    @model_validator(mode="after")
    def _complete(self) -> TeacherConfig:
        if self.kind == "openai" and not (self.base_url and self.model_name):
            raise ValueError("an openai teacher needs --base-url and --model-name")
        if self.kind in ENGINES:
            if self.model is None:
                raise ValueError(f"a {self.kind} teacher serves teacher.model=MODEL: name it")
            if self.base_url or self.model_name:
                raise ValueError(
                    f"a {self.kind} teacher is served where the stage launches it: drop"
                    " --base-url and --model-name (kind openai talks to a server of your own)"
                )
        elif self.model is not None:
            raise ValueError(f"model: for a vllm or sglang teacher; this one is {self.kind}")
        self.check_engine(self.kind)
        return self

    @property
    def is_llm(self) -> bool:
        """An LLM teaches (at an endpoint or served here), not the env's simulator."""
        return self.kind != "oracle"

    def price_table(self) -> dict[str, Price]:
        """The default prices, a model served here at $0, then the config's own prices."""
        served_here = {self.model: Price(input=0.0, output=0.0)} if self.kind in ENGINES else {}
        return {**DEFAULT_PRICES, **served_here, **self.prices}
