"""HTTP environment server, wire-compatible with AgentGym's servers for the same environment.

Where AgentGym's servers are fragile, ours are not: errors are real HTTP statuses with a JSON
``{"error": ...}`` body; each session has a lock; simulator calls run in worker threads so
the event loop keeps serving; a session limit bounds what abandoned clients can hold (a
sciworld session holds a JVM). Sessions live as long as AgentGym's do (its trainers hold a
client across an epoch) unless ``--idle-timeout`` says otherwise: a full server makes room by
closing its longest-unused session once that has been unused for a while.

The same server speaks OpenEnv's protocol too (openenv.py): its WebSocket sessions are
sessions here like any other.
"""

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from agentcli.common import listen_error
from agentcli.config import CommandConfig
from agentcli.envs.base import Environment, EnvSpec, Session, Transition
from agentcli.envs.registry import get_spec, require_simulator
from agentcli.envs.wire.client import BOOT_HEADER
from agentcli.envs.wire.format import CreateRequest, SessionRequest, StepRequest
from agentcli.envs.wire.openenv import add_openenv_routes
from agentcli.envs.wire.protocol import detail_after_reset, parse_json, payload
from agentcli.envs.wire.renamed import RenamedWire, replaying
from agentcli.envs.wire.sessions import (
    HTTPError,
    SessionLimits,
    SessionRegistry,
    Slot,
    run_locked,
)
from agentcli.errors import (
    EnvUnavailableError,
    SessionStateError,
    TaskNotFoundError,
    UsageError,
)

log = logging.getLogger("agentgym.server")
NOT_JSON = "malformed request: the body is not valid JSON"


class ServeConfig(CommandConfig):
    """``agentgym env serve``."""

    env: str = Field(description="Environment to serve (see `agentgym env list`).")
    host: str = Field(
        "127.0.0.1", description="Interface to bind; 0.0.0.0 exposes it to the network."
    )
    port: int | None = Field(
        None, ge=1, le=65535, description="TCP port; default: the environment's usual port."
    )
    max_sessions: int = Field(256, ge=1, description="Live sessions at most; more get HTTP 503.")
    idle_timeout_s: float | None = Field(
        None,
        gt=0,
        description="Close a session unused for this long (frees its simulator); default: "
        "never, but a full server closes one unused for 5 min to make room.",
    )
    max_body_bytes: int = Field(
        1 << 20, ge=1024, description="A request body larger than this gets HTTP 413."
    )
    read_timeout_s: float = Field(
        30.0,
        gt=0,
        description="A connection that has not sent a request's head this long after it opened"
        " (or after the previous answer) is closed; a body that has not arrived by then gets"
        " HTTP 408.",
    )
    max_connections: int | None = Field(
        None,
        ge=1,
        description="Open connections at most (HTTP and OpenEnv's /ws, each of whose sessions"
        " holds one); one more is answered 503 and closed; default: 4 × max_sessions.",
    )
    log_level: Literal["critical", "error", "warning", "info", "debug"] = "info"

    def session_limits(self) -> SessionLimits:
        return SessionLimits(self.max_sessions, self.idle_timeout_s)

    def connection_bound(self) -> int:
        return self.max_connections or 4 * self.max_sessions


class _BootIdMiddleware:
    """Stamps every response with this process's boot id, so clients notice a restart.

    Plain ASGI: Starlette's ``BaseHTTPMiddleware`` costs a task per request.
    """

    def __init__(self, app: Any, boot_id: str) -> None:
        self.app = app
        self.header = (BOOT_HEADER.encode(), boot_id.encode())

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def stamped(message: dict) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), self.header]
            await send(message)

        await self.app(scope, receive, stamped)


class _RequestLimits:
    """Reads each request's body before the app sees it, within ``max_bytes`` (HTTP 413) and
    ``timeout_s`` for each part to arrive (HTTP 408), so that a huge body cannot fill memory
    and a stalled one cannot hold a connection. Bodies here are small JSON objects: one that
    is not JSON gets the 422 every malformed body gets, here, since FastAPI's parser answers
    what it fails on other than by syntax (nesting too deep) with a 400 of its own shape."""

    def __init__(self, app: Any, max_bytes: int, timeout_s: float) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers", [])).get(b"content-length", b"0")
        if declared.isdigit() and int(declared) > self.max_bytes:
            return await _send_error(send, 413, self._too_large())
        body, more = b"", True
        while more:
            try:
                message = await asyncio.wait_for(receive(), self.timeout_s)
            except TimeoutError:
                message = f"the request body did not arrive within {self.timeout_s:g} s"
                return await _send_error(send, 408, message)
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_bytes:
                return await _send_error(send, 413, self._too_large())
        if body:
            try:
                parse_json(body)
            except ValueError:
                return await _send_error(send, 422, NOT_JSON)
        await self.app(scope, replaying(body, receive), send)

    def _too_large(self) -> str:
        return f"the request body is over {self.max_bytes} bytes; requests here are small JSON"


async def _send_error(send: Any, status: int, message: str) -> None:
    response = _error(status, message)
    await send({"type": "http.response.start", "status": status,
                "headers": response.raw_headers})  # fmt: skip
    await send({"type": "http.response.body", "body": response.body})


class ErrorBody(BaseModel):
    """Every error answer: what is wrong and what to do."""

    error: str


# Every error status the routes answer with, in the OpenAPI schema.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in {
        400: "a request this server does not support",
        404: "no such session (or split): the server may have restarted",
        408: "the request body did not arrive in time",
        409: "the session is not in a state for this call (no task yet, or its episode is over)",
        413: "the request body is too large",
        422: "a malformed request, or an item the environment does not have",
        500: "the simulator failed",
        503: "too many live sessions, or the environment cannot run here",
    }.items()
}


def _error(status: int, message: str, retry_after_s: int | None = None) -> JSONResponse:
    headers = {"retry-after": str(retry_after_s)} if retry_after_s is not None else None
    return JSONResponse(status_code=status, content={"error": message}, headers=headers)


def _validation_message(exc: RequestValidationError) -> str:
    problems = []
    for error in exc.errors():
        if error.get("type") == "json_invalid":
            return NOT_JSON
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        problems.append(f"{where or 'body'}: {message}")
    return "malformed request: " + "; ".join(problems)


def create_app(
    spec: EnvSpec,
    environment: Environment | None = None,
    settings: ServeConfig | None = None,
) -> FastAPI:
    """Build the app. ``environment`` is loaded at startup when not given."""
    settings = settings or ServeConfig(env=spec.name)
    wire = spec.wire
    state: dict[str, Any] = {}

    def registry() -> SessionRegistry:
        return state["registry"]

    async def reap_forever(timeout_s: float) -> None:
        interval = max(0.05, min(30.0, timeout_s / 4))
        while True:
            await asyncio.sleep(interval)
            await registry().reap_idle()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        loaded = environment or await asyncio.to_thread(spec.load)
        state["registry"] = SessionRegistry(loaded, settings.session_limits())
        timeout_s = settings.idle_timeout_s
        reaper = asyncio.create_task(reap_forever(timeout_s)) if timeout_s else None
        try:
            yield
        finally:
            if reaper:
                reaper.cancel()
            await registry().close_all()

    app = FastAPI(
        title=f"agentgym {spec.name} server", lifespan=lifespan, responses=ERROR_RESPONSES
    )
    if wire.id_field != "id":  # innermost: it reads the body _RequestLimits has checked
        app.add_middleware(RenamedWire, wire=wire)
    app.add_middleware(
        _RequestLimits, max_bytes=settings.max_body_bytes, timeout_s=settings.read_timeout_s
    )
    app.add_middleware(_BootIdMiddleware, boot_id=uuid.uuid4().hex)  # outermost: every answer

    @app.exception_handler(HTTPError)
    async def _http_error(request: Request, exc: HTTPError) -> JSONResponse:
        return _error(exc.status, str(exc), exc.retry_after_s)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, _validation_message(exc))

    @app.exception_handler(TaskNotFoundError)
    async def _no_task(request: Request, exc: TaskNotFoundError) -> JSONResponse:
        # 404 is kept for unknown sessions, which clients read as "server restarted".
        return _error(422, str(exc))

    @app.exception_handler(SessionStateError)
    async def _wrong_state(request: Request, exc: SessionStateError) -> JSONResponse:
        return _error(409, str(exc))

    @app.exception_handler(EnvUnavailableError)
    async def _unavailable(request: Request, exc: EnvUnavailableError) -> JSONResponse:
        return _error(503, str(exc))

    @app.exception_handler(UsageError)
    async def _usage(request: Request, exc: UsageError) -> JSONResponse:
        return _error(400, str(exc))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        log.exception("simulator error on %s", request.url.path)
        return _error(500, f"{spec.name} simulator error: {type(exc).__name__}: {exc}")

    def started(
        slot: Slot,
        session_id: int,
        transition: Transition,
        request: dict[str, Any],
        index: int | None = None,
    ) -> dict[str, Any]:
        slot.began(transition, index)
        slot.detail = detail_after_reset(wire, transition, request)
        return payload(transition, wire.reset_fields, session_id)

    async def reset(
        slot: Slot, session_id: int, index: int, request: dict[str, Any]
    ) -> dict[str, Any]:
        transition = await run_locked(slot, lambda: slot.session.reset(index))
        return started(slot, session_id, transition, request, index)

    async def create_custom(commands: str, goal: str) -> dict[str, Any]:
        """A session that plays the task given at /create (AgentGym's textcraft body)."""
        start = spec.custom_task
        if start is None:
            raise HTTPError(
                400,
                f"{spec.name} plays no task given at /create (commands, goal): leave them out"
                f" and POST /reset with {wire.index_field}",
            )
        session_id, slot = await registry().open()
        try:
            transition = await run_locked(slot, lambda: start(slot.session, commands, goal))
        except BaseException:
            await registry().close(session_id)
            raise
        return started(slot, session_id, transition, {})

    def current(session_id: int) -> tuple[Slot, Transition]:
        """The session and its last transition; refused before its first reset."""
        slot = registry().get(session_id)
        if slot.last is None:
            raise HTTPError(409, f"session {session_id} has no task yet; POST /reset first")
        return slot, slot.last

    @app.get("/")
    async def hello() -> str:
        return f"This is environment {spec.name}."

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {
            "status": "healthy",  # OpenEnv's word; its tools check it
            "env": spec.name,
            "sessions": len(registry()),
            "max_sessions": settings.max_sessions,
        }

    @app.get("/tasks")
    async def tasks(split: str | None = None) -> dict[str, Any]:
        splits = registry().environment.splits()
        if split is None:
            return {"env": spec.name, "splits": {name: len(ids) for name, ids in splits.items()}}
        if split not in splits:
            raise HTTPError(404, f"no split {split!r}; {spec.name} has {', '.join(splits)}")
        return {"env": spec.name, "split": split, "indices": splits[split]}

    @app.post("/create")
    async def create(body: CreateRequest | None = None) -> dict[str, Any]:
        custom = body.custom_task() if body is not None else None
        if custom is not None:
            return await create_custom(*custom)
        session_id, slot = await registry().open(body.style if body else None)
        slot.detail = dict(wire.detail_start)
        if wire.create_resets:
            return await reset(slot, session_id, 0, {})
        return {"id": session_id}

    @app.post("/reset")
    async def reset_route(body: wire.reset_request) -> dict[str, Any]:  # type: ignore[name-defined]
        return await reset(registry().get(body.id), body.id, body.data_idx, body.detail())

    @app.post("/step")
    async def step(body: StepRequest) -> dict[str, Any]:
        slot, last = current(body.id)
        if last.done:
            raise HTTPError(
                409, f"session {body.id}'s episode is over; POST /reset to start another"
            )
        transition = await run_locked(slot, lambda: slot.session.step(body.action))
        slot.stepped(transition)
        answer = payload(transition, wire.step_fields, body.id)
        slot.detail.update({name: answer[name] for name in wire.step_fields})
        return answer

    @app.get("/observation")
    async def observation(id: int) -> str:
        return current(id)[1].observation

    if wire.detail_fields:

        @app.get("/detail")
        async def detail(id: int) -> dict[str, Any]:
            """The session's fields, as AgentGym's server for this env keeps them."""
            return registry().get(id).detail

    if wire.available_actions_route:

        @app.get("/available_actions")
        async def available_actions(id: int) -> list[str]:
            """The actions the game admits now (AgentGym's alfworld route: a bare list)."""
            return current(id)[1].available_actions or []

    def session_route(answer: Callable[[Session], Any]) -> Callable[[int], Any]:
        async def route(id: int) -> Any:
            slot, _ = current(id)
            return await run_locked(slot, lambda: answer(slot.session))

        return route

    for path, answer in spec.session_routes.items():
        app.add_api_route(
            path, session_route(answer), methods=["GET"], name=answer.__name__,
            description=answer.__doc__ or "",
        )  # fmt: skip

    add_openenv_routes(app, spec, registry)

    @app.get("/expert")
    async def expert(id: int) -> dict[str, Any]:
        slot, _ = current(id)
        return {"action": await run_locked(slot, slot.session.expert_action)}

    @app.get("/privileged")
    async def privileged(
        id: int | None = None, data_idx: Annotated[int | None, Query(ge=0)] = None
    ) -> dict[str, Any]:
        if (id is None) == (data_idx is None):
            raise HTTPError(422, "pass exactly one of id (a session) or data_idx (an item index)")
        if data_idx is None:
            slot, _ = current(id)
            if slot.index is None:
                raise HTTPError(
                    409, f"session {id} plays a task given at /create, not an item; pass data_idx"
                )
            data_idx = slot.index
        text = await asyncio.to_thread(registry().environment.privileged_state, data_idx)
        return {"data_idx": data_idx, "text": text}

    @app.post("/close")
    async def close(body: SessionRequest) -> dict[str, Any]:
        await registry().close(body.id)
        return {"id": body.id, "closed": True}

    return app


def _check_port_free(host: str, port: int) -> None:
    """Fail before loading the environment, with one line, rather than after (uvicorn's way)."""
    if (error := listen_error(host, port)) is not None:
        raise UsageError(
            f"cannot listen on {host}:{port} ({error.strerror}); pick another with --port"
        )


def serve(config: ServeConfig) -> None:
    """Run the server in the foreground until interrupted."""
    from agentcli import serving

    spec = get_spec(config.env)
    require_simulator(spec, otherwise=f"no server; it needs {spec.requires}")
    port = config.port or spec.default_port
    _check_port_free(config.host, port)
    note = spec.note()
    if note:  # what this machine's settings make of the env (alfworld's games, webshop's tagger)
        log.warning("%s: %s", spec.name, note)
    serving.server(
        create_app(spec, settings=config),
        head_timeout_s=config.read_timeout_s,
        max_connections=config.connection_bound(),
        host=config.host,
        port=port,
        log_level=config.log_level,
        access_log=config.log_level == "debug",
    ).run()
