"""Privileged teachers: annotate demos, extract privileged state, correct student episodes.

``build_teacher`` makes the one a config asks for: an LLM behind any OpenAI-compatible
endpoint (``openai``), an LLM served by an engine the stage launches (``vllm``, ``sglang``:
``served_teacher``), or the environment's own oracle (``oracle``, built-in envs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from agentcli.endpoints import ModelEndpoints
from agentcli.policy.engine_server import ENGINES, serve_engine
from agentcli.teacher.base import Teacher
from agentcli.teacher.config import DEFAULT_PRICES, Price, TeacherConfig, TeacherKind

__all__ = [
    "DEFAULT_PRICES",
    "Price",
    "TeacherConfig",
    "TeacherKind",
    "build_teacher",
    "served_teacher",
]


@contextmanager
def served_teacher(
    config: TeacherConfig, log_file: Callable[[str], Path]
) -> Iterator[ModelEndpoints | None]:
    """Where an LLM teacher answers while the block runs: the engine of a ``vllm`` / ``sglang``
    teacher, launched on its model (its logs at ``log_file(name)``), or the configured
    endpoint; None for the oracle."""
    if config.kind in ENGINES:
        assert config.model is not None  # TeacherConfig checks it
        with serve_engine(
            config.kind, config, config.model, log_file=log_file, setting="teacher"
        ) as endpoints:
            yield endpoints
    elif config.kind == "openai":
        assert config.base_url and config.model_name  # TeacherConfig checks it
        yield ModelEndpoints((config.base_url,), config.model_name)
    else:
        yield None


def build_teacher(
    config: TeacherConfig,
    env: str,
    *,
    ledger: Path,
    cache: Path,
    endpoints: ModelEndpoints | None = None,
) -> Teacher:
    """The teacher ``config`` asks for; an LLM teacher asks ``endpoints`` (from
    ``served_teacher``), logs every call to ``ledger`` and caches every reply in ``cache``
    (``config.cache_dir`` wins when set)."""
    if config.kind == "oracle":
        from agentcli.teacher.oracle import OracleTeacher

        return OracleTeacher(env)
    from agentcli.teacher.llm import LLMTeacher
    from agentcli.teacher.llm_client import TeacherClient

    assert endpoints is not None, "an LLM teacher is built inside served_teacher"
    if config.cache_dir is not None:
        cache = config.cache_dir / "responses.jsonl"
    return LLMTeacher(TeacherClient(config, endpoints, ledger=ledger, cache=cache))
