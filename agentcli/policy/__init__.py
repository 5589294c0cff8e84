"""Policies: a local model (batched), an OpenAI-compatible endpoint (configured, or vLLM /
SGLang launched on the model for the duration), the env's oracle, or its rule baseline."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, model_validator

from agentcli.config import CommandConfig
from agentcli.endpoints import ModelEndpoints, with_kind
from agentcli.policy.admissible import CHOSEN_BY_MODEL, ActionMode
from agentcli.policy.base import Policy
from agentcli.policy.engine_server import ENGINES, EngineKind, EngineSettings, serve_engine

PolicyKind = Literal[
    "local", "openai", "oracle", "baseline", EngineKind
]  # Literal flattens EngineKind


class _Acting(CommandConfig):
    """Who acts and how it generates (``PolicySettings`` adds how an engine is launched)."""

    kind: PolicyKind = Field(
        "local",
        description="Who acts. local: a model directory; openai: an endpoint; vllm, sglang: the"
        " model directory served by that engine, launched for the stage; oracle: the env's"
        " expert; baseline: the env's rule baseline (webshop's: search the goal, click the"
        " first result, buy). Unset: openai given a base URL, else local.",
    )
    base_url: str | None = Field(
        None, description="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1."
    )
    model_name: str | None = Field(None, description="Model name at the endpoint.")
    api_key: SecretStr | None = Field(None, description="Endpoint key (else OPENAI_API_KEY).")
    max_new_tokens: int = Field(128, ge=1, description="Tokens per reply at most.")
    temperature: float = Field(0.0, ge=0, description="Sampling temperature; 0: greedy.")
    seed: int = Field(0, description="Sampling seed.")
    actions: ActionMode = Field(
        "free",
        description="free: the reply's action as written; admissible: a reply's action that"
        " the env does not list becomes the listed action nearest to it in characters (each"
        " replacement recorded in the episode's meta.replaced_actions); ranked: a local model"
        " scores each listed action as its whole reply and takes the likeliest; constrained:"
        " the listed action that greedy decoding writes when it may write only those (both"
        " with a view without reasons).",
    )
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


class PolicySettings(EngineSettings, _Acting):  # in this order, the engine's settings list last
    """How a policy acts: an endpoint (``openai``: ``base_url`` and ``model_name``), a local
    model directory given elsewhere (``local``), that directory served by an engine the stage
    launches (``vllm``, ``sglang``: ``agentcli.policy.engine_server``), or the env's expert
    (``oracle``).

    Left unsaid, the kind follows from what is given: a ``base_url`` means an endpoint,
    anything else a local model. One rule, so that YAML, environment variables and flags agree.
    """

    @model_validator(mode="before")
    @classmethod
    def _infer_kind(cls, data: Any) -> Any:
        return with_kind(data, otherwise="local")

    @model_validator(mode="after")
    def _endpoint_complete(self) -> PolicySettings:
        if self.kind == "openai" and not (self.base_url and self.model_name):
            raise ValueError("an openai policy needs --base-url and --model-name")
        if self.kind in ENGINES and (self.base_url or self.model_name):
            raise ValueError(
                f"a {self.kind} policy is served where the stage launches it: drop --base-url"
                " and --model-name (kind openai talks to a server of your own)"
            )
        if self.actions in CHOSEN_BY_MODEL and self.kind != "local":
            raise ValueError(
                f"actions {self.actions} scores each listed action with a local model's own"
                f" probabilities, which policy kind {self.kind} does not give: pass --model DIR,"
                " or use --actions admissible"
            )
        self.check_engine(self.kind)
        return self


class PolicyConfig(PolicySettings):
    """Who acts: ``PolicySettings`` and, for a local, vllm or sglang policy, its model directory."""

    model: Path | None = Field(
        None,
        description="Model directory (HF format): loaded here (local), or served by a vllm or"
        " sglang engine.",
    )

    @model_validator(mode="after")
    def _model_given(self) -> PolicyConfig:
        if self.kind == "local" and self.model is None:
            raise ValueError(
                "say who acts: --model DIR (a local model), --base-url URL --model-name NAME"
                " (an endpoint), or --policy oracle (the env's expert)"
            )
        if self.kind in ENGINES and self.model is None:
            raise ValueError(f"a {self.kind} policy serves a model directory: pass --model DIR")
        return self


@contextmanager
def served_policy(
    config: PolicyConfig, log_file: Callable[[str], Path]
) -> Iterator[ModelEndpoints | None]:
    """The engine of a ``vllm`` / ``sglang`` policy serving its model while the block runs
    (its logs at ``log_file(name)``); None for the kinds that launch nothing."""
    if config.kind not in ENGINES:
        yield None
        return
    with serve_engine(
        config.kind, config, str(config.model), log_file=log_file, setting="policy"
    ) as endpoints:
        yield endpoints


def build_policy(
    config: PolicyConfig,
    *,
    concurrency: int,
    served: ModelEndpoints | None = None,
    baseline: Callable[[str], str] | None = None,
) -> Policy:
    """The policy ``config`` asks for; a ``vllm`` / ``sglang`` one talks to ``served``, the
    engine that ``served_policy`` launched, a ``baseline`` one acts by ``baseline`` (the env's
    rule). A local model loads in a worker thread, and the policy's first turns wait for it:
    build the policy before starting what else the run needs."""
    if config.kind == "oracle":
        from agentcli.policy.oracle import OraclePolicy

        return OraclePolicy()
    if config.kind == "baseline":
        from agentcli.policy.baseline import BaselinePolicy

        assert baseline is not None, "the env's rule: the stage checks that it has one"
        return BaselinePolicy(baseline)
    if config.kind == "openai" or config.kind in ENGINES:
        from agentcli.endpoints import api_key
        from agentcli.policy.openai_endpoint import OpenAIPolicy

        if config.kind == "openai":
            assert config.base_url and config.model_name  # PolicySettings checks it
            served = ModelEndpoints((config.base_url,), config.model_name)
        assert served is not None, "an engine's policy is built inside served_policy"
        return OpenAIPolicy(
            served.base_urls,
            served.model_name,
            label=config.kind,
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
        load_in_background=True,
    )
