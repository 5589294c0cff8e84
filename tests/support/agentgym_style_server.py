"""Servers that behave like AgentGym's, for tests of our client against them.

AgentGym's servers cannot be installed here. These keep what our client must cope with, as
AgentGym's textcraft and webshop servers do (agentenv-textcraft/, agentenv-webshop/ at
3ef9235): no /health, /tasks or /expert; errors as HTTP 200 with an ``error`` field; answers
without our ``success`` field. Textcraft's /create resets to item ``id`` and its /close answers
true or false; webshop's /create answers a bare id, its /reset ``[observation, null]``, its
/step a ``state``, and it has no /close (its sessions are never freed). The game behind both
is real textcraft: a client reads only the wire.

``busy_503s`` makes the first that many /step requests answer 503 without Retry-After, as a
busy WebShop (or a proxy before it) does; AgentGym's webshop client retries those.
``create_s`` makes /create take that long, as sciworld's (a JVM start) does.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from agentcli.envs.textcraft import SPEC
from tests.support.servers import app_in_thread

Wire = Literal["textcraft", "webshop"]


@dataclass
class AgentGymStyleServer:
    url: str
    sessions: dict[int, Any]  # the live sessions, as the server holds them
    requests: list[str] = field(default_factory=list)  # "POST /create", ... as they came


class _Create(BaseModel):
    commands: str | None = None
    goal: str | None = None
    minecraft_dir: str | None = None


class _Reset(BaseModel):
    id: int
    data_idx: int = 0


class _Step(BaseModel):
    id: int
    action: str


class _Close(BaseModel):
    id: int


class _WebShopReset(BaseModel):
    env_idx: int
    session_id: int | None = None


class _WebShopStep(BaseModel):
    env_idx: int
    action: str


def build_app(server: AgentGymStyleServer, wire: Wire, busy_503s: int, create_s: float) -> FastAPI:
    environment = SPEC.load()
    sessions = server.sessions
    observations: dict[int, str] = {}
    opened = iter(range(10**9))  # ids are never reused, as AgentGym's _max_id
    busy = {"left": busy_503s}
    app = FastAPI()

    @app.middleware("http")
    async def record(request: Request, call_next: Any) -> Any:
        server.requests.append(f"{request.method} {request.url.path}")
        if request.url.path == "/step" and busy["left"]:
            busy["left"] -= 1
            return JSONResponse(status_code=503, content={"detail": "busy"})
        return await call_next(request)

    def play(session_id: int, call: Any) -> Any:
        transition = call(sessions[session_id])
        observations[session_id] = transition.observation
        return transition

    if wire == "textcraft":

        @app.get("/")
        def hello() -> str:
            return "This is environment TextCraft."

        @app.post("/create")
        def create(body: _Create) -> dict[str, Any]:
            time.sleep(create_s)
            session_id = next(opened)
            sessions[session_id] = environment.open_session()
            transition = play(session_id, lambda game: game.reset(session_id))
            return {"id": session_id, **_textcraft_fields(transition)}

        @app.post("/reset")
        def reset(body: _Reset) -> dict[str, Any]:
            if body.id not in sessions:
                return {"error": f"The id {body.id} is not valid."}
            transition = play(body.id, lambda game: game.reset(body.data_idx))
            return {"id": body.id, **_textcraft_fields(transition)}

        @app.post("/step")
        def step(body: _Step) -> dict[str, Any]:
            if body.id not in sessions:
                return {"error": f"The id {body.id} is not valid."}
            return _textcraft_fields(play(body.id, lambda game: game.step(body.action)))

        @app.get("/observation")
        def observation(id: int) -> Any:
            if id not in sessions:
                return {"error": f"The id {id} is not valid."}
            return observations[id]

        @app.post("/close")
        def close(body: _Close) -> bool:
            session = sessions.pop(body.id, None)
            if session is not None:
                session.close()
            return session is not None

    else:

        @app.get("/")
        def ok() -> str:
            return "ok"

        @app.post("/create")
        def create_webshop() -> int:
            session_id = next(opened)
            sessions[session_id] = environment.open_session()
            return session_id

        @app.post("/reset")
        def reset_webshop(body: _WebShopReset) -> list[Any]:
            play(body.env_idx, lambda game: game.reset(body.session_id or 0))
            return [observations[body.env_idx], None]

        @app.post("/step")
        def step_webshop(body: _WebShopStep) -> dict[str, Any]:
            transition = play(body.env_idx, lambda game: game.step(body.action))
            return {"state": transition.observation, "reward": transition.reward,
                    "done": transition.done, "info": None}  # fmt: skip

        @app.get("/observation")
        def observation_webshop(env_idx: int) -> str:
            return observations[env_idx]

    return app


def _textcraft_fields(transition: Any) -> dict[str, Any]:
    return {"observation": transition.observation, "reward": transition.reward,
            "done": transition.done}  # fmt: skip


@contextmanager
def agentgym_style_server(
    wire: Wire = "textcraft", *, busy_503s: int = 0, create_s: float = 0.0
) -> Iterator[AgentGymStyleServer]:
    running = AgentGymStyleServer(url="", sessions={})
    with app_in_thread(build_app(running, wire, busy_503s, create_s)) as running.url:
        yield running
