"""OpenEnv's protocol on our env servers, beside AgentGym's: one server speaks both.

An OpenEnv client (``openenv``'s ``GenericEnvClient``, or any ``EnvClient``) opens the
WebSocket ``/ws``: one connection, one env session, closed when the connection ends. As
OpenEnv's server does (``openenv.core.env_server.http_server``, openenv 0.10):

- the client sends ``{"type": "reset" | "step" | "state" | "close", "data": {...}}``; the
  server answers ``{"type": "observation", "data": {"observation": {...}, "reward", "done"}}``,
  ``{"type": "state", "data": {...}}``, or ``{"type": "error", "data": {"message", "code"}}``
  with OpenEnv's codes, after which the session goes on;
- ``/ws?session_id=N`` attaches to live session N (say, one opened with ``POST /create``)
  and leaves it open at the end; an unknown one is refused (``SESSION_ERROR``), as is a
  session already attached, and a full server refuses a new one (``CAPACITY_REACHED``);
- ``GET /schema`` (the action, observation and state JSON schemas), ``/metadata``, and
  ``/state`` (OpenEnv's HTTP state is that of no episode: its HTTP routes hold no session).

Where ours differ: a reset names its item (``item_id`` as records write it, or ``seed``, its
index) and fields it does not know are refused (OpenEnv's server drops them). HTTP ``/reset``
and ``/step`` stay AgentGym's: OpenEnv's are stateless (a fresh env per call), and its
clients play over ``/ws``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from collections.abc import Callable
from typing import Any, Literal

from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from pydantic import BaseModel, ConfigDict, Field, ValidationError

import agentcli
from agentcli.envs.base import EnvSpec, Transition
from agentcli.envs.wire.format import MAX_ACTION_CHARS
from agentcli.envs.wire.protocol import parse_json
from agentcli.envs.wire.sessions import HTTPError, SessionRegistry, Slot, run_locked
from agentcli.errors import UsageError
from agentcli.records import item_id, parse_item_id

log = logging.getLogger("agentgym.server")


class OpenEnvAction(BaseModel):
    """What a step sends: one action, written as the env's instructions describe them."""

    model_config = ConfigDict(extra="forbid")
    action: str = Field(max_length=MAX_ACTION_CHARS, description="One action, e.g. `look`.")
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="OpenEnv's action metadata; not read here."
    )


class OpenEnvReset(BaseModel):
    """What a reset sends (``env.reset(item_id=...)`` or ``env.reset(seed=...)``)."""

    model_config = ConfigDict(extra="forbid")
    item_id: str | None = Field(
        None, description="The item to play, as records name it: textcraft_12."
    )
    seed: int | None = Field(
        None, ge=0, description="The item's index (12 for textcraft_12), OpenEnv's reset option."
    )
    episode_id: str | None = Field(
        None, max_length=255, description="The episode's name in the state; default: a uuid."
    )

    def index(self, env: str) -> int:
        if self.item_id is None:
            if self.seed is None:
                raise UsageError(
                    f"a reset names its item: item_id (e.g. {env}_0) or seed (the item's index)"
                )
            return self.seed
        named, index = parse_item_id(self.item_id)
        if named != env:
            raise UsageError(f"item {self.item_id} is not a {env} item: this server plays {env}")
        if self.seed is not None and self.seed != index:
            raise UsageError(
                f"item_id {self.item_id} and seed {self.seed} name different items; give one"
            )
        return index


class OpenEnvObservation(BaseModel):
    """An observation as OpenEnv's clients read it (``reward`` and ``done`` travel beside it,
    as OpenEnv's server sends them)."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(description="What the env shows: the observation AgentGym's wire sends.")
    score: float = Field(description="The episode's score, on the env's scale (sciworld 0-100).")
    success: bool = Field(description="Whether the episode is won, by the env's own rule.")
    available_actions: list[str] | None = Field(
        None, description="The actions the env admits now, where it lists them (alfworld)."
    )
    done: bool = False
    reward: float | None = None
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="The env's other wire fields (task_description, task_type, ...).",
    )


class OpenEnvState(BaseModel):
    """A session's state (OpenEnv's ``State``: ``episode_id``, ``step_count``, and ours)."""

    episode_id: str | None = None
    step_count: int = Field(0, ge=0, description="Steps since the last reset.")
    item_id: str | None = Field(
        None, description="The item played; none before a reset, or for a task given at /create."
    )
    done: bool = False
    score: float = 0.0
    success: bool = False


class OpenEnvSchemas(BaseModel):
    """``GET /schema``: OpenEnv's ``SchemaResponse``."""

    action: dict[str, Any]
    observation: dict[str, Any]
    reset_observation: dict[str, Any]
    state: dict[str, Any]


class OpenEnvMetadata(BaseModel):
    """``GET /metadata``: OpenEnv's ``EnvironmentMetadata``."""

    name: str
    description: str
    readme_content: str | None = None
    version: str | None = None
    author: str | None = None
    documentation_url: str | None = None


class _Reset(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["reset"]
    data: OpenEnvReset = Field(default_factory=OpenEnvReset)


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["step"]
    data: OpenEnvAction


class _Bare(BaseModel):  # state and close carry nothing (OpenEnv refuses a data field)
    model_config = ConfigDict(extra="forbid")
    type: Literal["state", "close"]


_MESSAGES: dict[str, type[_Reset | _Step | _Bare]] = {
    "reset": _Reset, "step": _Step, "state": _Bare, "close": _Bare,
}  # fmt: skip


class _Refusal(Exception):
    """An error answer; ``ends`` when the connection closes after it."""

    def __init__(self, code: str, message: str, ends: bool = False, **details: Any) -> None:
        super().__init__(message)
        self.answer = {"type": "error", "data": {"message": message, "code": code, **details}}
        self.ends = ends


def _observation(transition: Transition) -> dict[str, Any]:
    """The data of an observation answer, laid out as OpenEnv's ``serialize_observation``."""
    observation = OpenEnvObservation(
        text=transition.observation,
        score=transition.score,
        success=transition.success,
        available_actions=transition.available_actions,
        done=transition.done,
        reward=transition.reward,
        metadata=transition.extra,
    )
    data: dict[str, Any] = {
        "observation": observation.model_dump(exclude={"reward", "done"}),
        "reward": observation.reward,
        "done": observation.done,
    }
    if observation.metadata:
        data["metadata"] = observation.metadata
    return data


def _state(env: str, slot: Slot) -> dict[str, Any]:
    last = slot.last
    return OpenEnvState(
        episode_id=slot.episode_id,
        step_count=slot.steps,
        item_id=item_id(env, slot.index) if slot.index is not None else None,
        done=bool(last and last.done),
        score=last.score if last else 0.0,
        success=bool(last and last.success),
    ).model_dump()


class _Conversation:
    """One WebSocket's session: its messages answered one at a time."""

    def __init__(self, spec: EnvSpec, registry: SessionRegistry, session_id: int) -> None:
        self.spec = spec
        self.registry = registry
        self.session_id = session_id

    async def answer(self, text: str | None) -> dict[str, Any] | None:
        """The answer to one message, the text of a frame (None: a binary frame); None for
        ``close``."""
        if text is None:
            raise _Refusal("INVALID_JSON", "Invalid JSON: a binary frame; send text frames")
        try:
            message = parse_json(text)
        except ValueError as exc:
            raise _Refusal("INVALID_JSON", f"Invalid JSON: {exc}") from None
        kind = message.get("type", "") if isinstance(message, dict) else ""
        if not isinstance(kind, str) or kind not in _MESSAGES:  # a list is no key of a dict
            raise _Refusal("UNKNOWN_TYPE", f"Unknown message type: {kind}")
        try:
            parsed = _MESSAGES[kind].model_validate(message)
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_context=False)
            raise _Refusal("VALIDATION_ERROR", "Invalid message", errors=errors) from None
        if parsed.type == "close":
            return None
        slot = self._slot()
        try:
            if isinstance(parsed, _Reset):
                return await self._reset(slot, parsed.data)
            if isinstance(parsed, _Step):
                return await self._step(slot, parsed.data.action)
            return {"type": "state", "data": _state(self.spec.name, slot)}
        except UsageError as exc:  # refused: no such item, no episode yet, ...
            raise _Refusal("EXECUTION_ERROR", str(exc)) from None
        except Exception as exc:
            log.exception("simulator error on /ws")
            message = f"{self.spec.name} simulator error: {type(exc).__name__}: {exc}"
            raise _Refusal("EXECUTION_ERROR", message) from None

    def _slot(self) -> Slot:
        try:
            return self.registry.get(self.session_id)
        except HTTPError:  # closed under us: idle too long, or POST /close
            message = f"session {self.session_id} is closed (idle, or closed over HTTP)"
            raise _Refusal("SESSION_ERROR", message, ends=True) from None

    async def _reset(self, slot: Slot, request: OpenEnvReset) -> dict[str, Any]:
        index = request.index(self.spec.name)
        transition = await run_locked(slot, lambda: slot.session.reset(index))
        slot.began(transition, index, request.episode_id or str(uuid.uuid4()))
        return {"type": "observation", "data": _observation(transition)}

    async def _step(self, slot: Slot, action: str) -> dict[str, Any]:
        if slot.last is None:
            raise UsageError("this session has no episode yet: send a reset first")
        if slot.last.done:
            raise UsageError("the episode is over: send a reset to start another")
        transition = await run_locked(slot, lambda: slot.session.step(action))
        slot.stepped(transition)
        return {"type": "observation", "data": _observation(transition)}


def add_openenv_routes(
    app: FastAPI, spec: EnvSpec, registry: Callable[[], SessionRegistry]
) -> None:
    """OpenEnv's session endpoint and its schema routes, on the app of ``spec``'s server."""
    attached: set[int] = set()  # sessions a WebSocket attached to (one at a time each)

    async def join(requested: str | None) -> tuple[int, bool]:
        """The session of a new connection, and whether the connection owns it."""
        sessions = registry()
        if requested is None:
            try:
                session_id, _ = await sessions.open()
            except HTTPError as exc:  # full
                raise _Refusal(
                    "CAPACITY_REACHED", str(exc), ends=True, active_sessions=len(sessions),
                    max_sessions=sessions.limits.max_sessions,
                ) from None  # fmt: skip
            except Exception as exc:
                log.exception("opening a session for /ws")
                raise _Refusal("FACTORY_ERROR", f"{spec.name}: {exc}", ends=True) from None
            return session_id, True
        try:
            session_id = int(requested)
            sessions.get(session_id)
        except (ValueError, HTTPError):
            raise _Refusal("SESSION_ERROR", f"Unknown session_id: {requested}", ends=True) from None
        if session_id in attached:
            message = f"Session {session_id} already has an attached WebSocket"
            raise _Refusal("SESSION_ERROR", message, ends=True)
        attached.add(session_id)
        return session_id, False

    async def converse(websocket: WebSocket, conversation: _Conversation) -> None:
        while True:
            frame = await websocket.receive()
            if frame["type"] == "websocket.disconnect":
                return
            try:
                answer = await conversation.answer(frame.get("text"))
            except _Refusal as refusal:
                await websocket.send_text(json.dumps(refusal.answer))
                if refusal.ends:
                    return
                continue
            if answer is None:
                return
            await websocket.send_text(json.dumps(answer))

    @app.websocket("/ws")
    async def session_endpoint(websocket: WebSocket, session_id: str | None = None) -> None:
        """OpenEnv's session: one env session for the connection's life (or, with
        ``session_id``, a live one attached)."""
        await websocket.accept()
        try:
            joined, owned = await join(session_id)
        except _Refusal as refusal:
            await websocket.send_text(json.dumps(refusal.answer))
            await websocket.close()
            return
        try:
            await converse(websocket, _Conversation(spec, registry(), joined))
        except WebSocketDisconnect:
            pass
        finally:
            if owned:
                with contextlib.suppress(HTTPError):  # already closed (idle)
                    await registry().close(joined)
            else:
                attached.discard(joined)
            with contextlib.suppress(RuntimeError, WebSocketDisconnect):
                await websocket.close()

    @app.get("/schema")
    async def schema() -> OpenEnvSchemas:
        """OpenEnv's schemas of this server's actions, observations and state."""
        observation = OpenEnvObservation.model_json_schema()
        return OpenEnvSchemas(
            action=OpenEnvAction.model_json_schema(),
            observation=observation,
            reset_observation=observation,
            state=OpenEnvState.model_json_schema(),
        )

    @app.get("/metadata")
    async def metadata() -> OpenEnvMetadata:
        """OpenEnv's description of the environment."""
        return OpenEnvMetadata(
            name=spec.name, description=spec.summary, version=agentcli.__version__
        )

    if "/state" not in spec.session_routes:  # webshop's /state is AgentGym's (a session's page)

        @app.get("/state")
        async def state() -> OpenEnvState:
            """OpenEnv's HTTP state: that of no episode (OpenEnv's HTTP routes hold no
            session; a session's state is the ``state`` message on ``/ws``)."""
            return OpenEnvState()
