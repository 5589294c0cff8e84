"""Environment name -> spec. Importing this module imports no simulator package."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Annotated

from pydantic import AfterValidator

from agentcli.envs import alfworld, babyai, sciworld, textcraft, webarena, webshop
from agentcli.envs.base import EnvSpec
from agentcli.errors import AgentGymError, EnvUnavailableError, UsageError

BUILT_IN = (
    textcraft.SPEC,
    sciworld.SPEC,
    babyai.SPEC,
    babyai.PUT_NEXT_SPEC,
    alfworld.SPEC,
    webshop.SPEC,
)
CLIENT_ONLY = (webarena.SPEC,)  # a client here for a server the user runs
SPECS: dict[str, EnvSpec] = {spec.name: spec for spec in (*BUILT_IN, *CLIENT_ONLY)}


def get_spec(name: str) -> EnvSpec:
    try:
        return SPECS[name]
    except KeyError:
        close = difflib.get_close_matches(name, SPECS, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UsageError(
            f"unknown environment {name!r}; {hint}known: {', '.join(SPECS)} "
            "(see `agentgym env list`)"
        ) from None


def known_env(name: str) -> str:
    """``name`` when it is a known env; else the error naming the closest one."""
    get_spec(name)
    return name


# A config field naming an environment: a typo is refused when the config is read.
EnvName = Annotated[str, AfterValidator(known_env)]


def known_splits(spec: EnvSpec, url: str) -> dict[str, list[int]]:
    """Item indices per split from the env's own simulator here (or, without one, as its
    spec knows them), for the server at ``url`` that lists none (AgentGym's have no
    ``/tasks``, and index their tasks as we do)."""
    if spec.load is None and spec.known_splits is not None:
        return spec.known_splits()
    reason = "it has no built-in simulator" if spec.load is None else spec.missing()
    if reason:
        raise UsageError(
            f"the {spec.name} server at {url} lists no tasks (no /tasks) and {spec.name}'s"
            f" are not known here ({reason}): pass --data FILE, an AgentGym JSON of item ids"
        )
    return spec.load().splits()


RUN_A_SERVER = "run one and pass --env-server URL"


def require_simulator(spec: EnvSpec, *, otherwise: str) -> None:
    """Refuse, in one line, to run ``spec``'s simulator here: agentgym has only a client for it
    (``otherwise`` says what to do instead), or this machine lacks what it needs."""
    if spec.load is None:
        raise UsageError(f"agentgym has only a client for {spec.name}: {otherwise}")
    reason = spec.missing()
    if reason:
        raise EnvUnavailableError(f"{spec.name} cannot run here: {reason}")


@dataclass(frozen=True)
class EnvOverview:
    spec: EnvSpec
    splits: dict[str, int]
    status: str  # "ready", "client only", or why it cannot run here


def overview(spec: EnvSpec) -> EnvOverview:
    """Splits and readiness of one environment (loads it, which may take a second)."""
    if spec.load is None:
        splits = spec.known_splits() if spec.known_splits else {}
        return EnvOverview(spec, {name: len(ids) for name, ids in splits.items()}, "client only")
    reason = spec.missing()
    if reason:
        return EnvOverview(spec, {}, reason)
    try:
        splits = spec.load().splits()
    except AgentGymError as exc:
        return EnvOverview(spec, {}, str(exc))
    note = spec.note()
    status = f"ready: {note}" if note else "ready"
    return EnvOverview(spec, {name: len(ids) for name, ids in splits.items()}, status)
