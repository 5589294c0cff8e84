"""The records every stage reads and writes (one per JSONL line), as pydantic models.

Demos, rollouts and eval outputs are all ``Episode``s; teachers write ``PrivilegedState``
and ``Correction``; dataset builders write ``ChatRecord`` (bc/sft) and ``PreferenceRecord``
(dpo). Unknown keys are errors, so a typo in a hand-edited file is caught on read.

How an episode reads as a conversation is ``agentcli.conversation``'s job.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentcli.errors import UsageError

_ITEM_ID = re.compile(r"(?P<env>[A-Za-z][A-Za-z0-9_-]*)_(?P<index>0|[1-9][0-9]*)")


def item_id(env: str, index: int) -> str:
    """``textcraft``, 12 → ``textcraft_12``."""
    made = f"{env}_{index}"
    parse_item_id(made)  # refuses an env name or index that would not read back the same
    return made


def parse_item_id(text: str) -> tuple[str, int]:
    """``textcraft_12`` → (``textcraft``, 12); the env name may itself hold ``_``."""
    match = _ITEM_ID.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise UsageError(_malformed(text))
    return match["env"], int(match["index"])


def _malformed(text: object) -> str:
    return (
        f"item id {text!r}: expected '<env>_<index>' such as 'textcraft_12'"
        " (an index ≥ 0 without leading zeros) — fix the id"
    )


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Keyed(Record):
    item_id: str

    @field_validator("item_id")
    @classmethod
    def _well_formed(cls, value: str) -> str:
        if _ITEM_ID.fullmatch(value) is None:
            raise ValueError(_malformed(value))  # pydantic reports ValueError with the field
        return value


class Step(Record):
    """One turn: what the agent saw, why and what it did, and what the env answered."""

    observation: str  # the text the agent acted on
    reason: str = ""
    action: str
    reward: float = 0.0  # after the action
    done: bool = False  # after the action
    candidate_actions: list[str] | None = None  # the env's valid actions, where it lists them


class Episode(_Keyed):
    """One attempt at one task, by any policy.

    ``instruction`` opens the conversation (the env's prompt); ``final_observation`` is the
    env's answer to the last action, when there was one; ``n_steps`` is ``len(steps)`` and is
    filled in when left out. ``meta`` holds policy, model, iteration, seed, timings,
    ``end_reason`` (an ``agentcli.common.EndReason``) and ``error``; converters keep there
    what a foreign format held that these fields cannot (``meta["agentgym"]``,
    ``meta["leap"]``).
    """

    env: str
    split: str | None = None  # None when the source does not say (imported files)
    instruction: str
    steps: list[Step] = Field(default_factory=list)
    final_observation: str | None = None
    reward: float = 0.0
    success: bool = False
    n_steps: int
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _count_steps(cls, data: Any) -> Any:
        if isinstance(data, dict) and "n_steps" not in data:
            return {**data, "n_steps": len(data.get("steps") or [])}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Episode:
        env, _ = parse_item_id(self.item_id)
        if env != self.env:
            raise ValueError(f"item_id {self.item_id!r} names env {env!r} but env is {self.env!r}")
        if self.n_steps != len(self.steps):
            raise ValueError(f"n_steps is {self.n_steps} but there are {len(self.steps)} steps")
        return self

    @property
    def index(self) -> int:
        return parse_item_id(self.item_id)[1]


class PrivilegedState(_Keyed):
    """What a teacher may know about a task and the student may not."""

    text: str


class CorrectionStep(Record):
    """The teacher's verdict on step ``t``; ``original_*`` is copied from the rollout."""

    t: int = Field(ge=0)
    observation: str
    original_reason: str
    original_action: str
    corrected_reason: str
    corrected_action: str
    is_corrected: bool


class Correction(_Keyed):
    summary: str
    steps: list[CorrectionStep]


class ChatMessage(Record):
    role: Literal["system", "user", "assistant"]
    content: str
    loss: bool | None = None  # train on this message; None: the trainer's default for its role


class ChatRecord(_Keyed):
    """A bc/sft example: a whole conversation with per-message loss flags."""

    messages: list[ChatMessage] = Field(min_length=1)


class PreferenceRecord(_Keyed):
    """A dpo example: text or messages, the same kind in all three fields."""

    prompt: str | list[ChatMessage]
    chosen: str | list[ChatMessage]
    rejected: str | list[ChatMessage]

    @model_validator(mode="after")
    def _same_kind(self) -> PreferenceRecord:
        kinds = {isinstance(part, str) for part in (self.prompt, self.chosen, self.rejected)}
        if len(kinds) > 1:
            raise ValueError("prompt, chosen and rejected must all be text or all be messages")
        return self
