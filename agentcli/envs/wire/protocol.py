"""AgentGym's environment-server protocol: transitions as response bodies and back, shared
by our server and client.

What a body carries depends on the environment's ``WireFormat`` (``format.py``). Our servers
also send ``success`` (ignored by AgentGym's clients); when talking to AgentGym's servers our
client derives it with the format's ``infer_success``.
"""

from __future__ import annotations

import json
from typing import Any

from agentcli.envs.base import Transition
from agentcli.envs.wire.format import WireFormat

MAX_JSON_DEPTH = 100  # a request or frame nests 3 levels; Ruby's JSON parser refuses > 100
TRANSITION_FIELDS = ("observation", "reward", "score", "done", "available_actions")


def parse_json(text: str | bytes) -> Any:
    """``text`` as JSON, or ValueError for whatever is not: bad syntax or encoding, or nesting
    deeper than ``MAX_JSON_DEPTH``. ``json`` raises RecursionError at about 1,000 levels, a
    little sooner the deeper the caller's stack, so a body that passes one parser could fail
    FastAPI's: the bound keeps every parser of a request far from that limit."""
    too_deep = ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        value = json.loads(text)
    except RecursionError:
        raise too_deep from None
    depth, level = 0, [value] if isinstance(value, list | dict) else []
    while level:  # the containers a level down, without recursion
        depth += 1
        if depth > MAX_JSON_DEPTH:
            raise too_deep
        level = [
            inner
            for outer in level
            for inner in (outer.values() if isinstance(outer, dict) else outer)
            if isinstance(inner, list | dict)
        ]
    return value


def _field(transition: Transition, name: str) -> Any:
    if name == "deleted":  # AgentGym's flag of a closed session: one that answers is not
        return False
    if name == "state":  # webshop's name for the observation
        return transition.observation
    return getattr(transition, name) if name in TRANSITION_FIELDS else transition.extra.get(name)


def payload(transition: Transition, fields: tuple[str, ...], session_id: int) -> dict[str, Any]:
    """Render a transition as the response body an AgentGym client expects, plus ``success``."""
    body = {name: session_id if name == "id" else _field(transition, name) for name in fields}
    body["success"] = transition.success
    return body


def detail_after_reset(
    wire: WireFormat, transition: Transition, request: dict[str, Any]
) -> dict[str, Any]:
    """The session's ``/detail`` after a reset, as AgentGym's server for the env keeps it;
    ``request`` holds what of the reset request it keeps (alfworld: game, world_type)."""
    fields = {
        name: request[name] if name in request else _field(transition, name)
        for name in wire.detail_fields
    }
    return {**wire.detail_start, **fields}


def transition_from_payload(body: dict[str, Any], wire: WireFormat) -> Transition:
    """Read a response body from our server or AgentGym's into a ``Transition``."""
    known = TRANSITION_FIELDS + (
        wire.id_field, wire.observation_field, wire.done_field, "success", "deleted",
    )  # fmt: skip
    extra = {k: v for k, v in body.items() if k not in known}
    success = body["success"] if "success" in body else wire.infer_success(body)
    done = bool(body.get(wire.done_field, False))
    counts = done or not wire.reward_when_done_only
    return Transition(
        observation=str(body.get(wire.observation_field, "")),
        reward=float(body.get("reward") or 0.0) if counts else 0.0,
        score=float(body.get("score", body.get("reward")) or 0.0) if counts else 0.0,
        done=done,
        success=bool(success),
        available_actions=body.get("available_actions"),
        extra=extra,
    )


def as_received(transition: Transition, wire: WireFormat, *, reset: bool) -> Transition:
    """``transition`` as a client reads it from our server: only the wire's fields survive
    (what an in-process caller must see to match an episode recorded over HTTP)."""
    fields = wire.reset_fields if reset else wire.step_fields
    return transition_from_payload(payload(transition, fields, 0), wire)
