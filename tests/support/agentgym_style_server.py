"""A server that follows AgentGym's textcraft server conventions, for client compatibility tests.

AgentGym's servers cannot be installed here. This one keeps what our client must cope with:
no /health, errors reported as HTTP 200 with an ``error`` field, ``/create`` that resets to
item ``id``, and responses without our ``success`` field. The game itself is real textcraft.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel

from agentcli.envs.textcraft import SPEC
from tests.support.servers import free_port


class _Create(BaseModel):
    commands: str | None = None
    goal: str | None = None
    minecraft_dir: str | None = None


class _Reset(BaseModel):
    id: int
    data_idx: int


class _Step(BaseModel):
    id: int
    action: str


def build_app() -> FastAPI:
    environment = SPEC.load()
    sessions: dict[int, Any] = {}
    app = FastAPI()

    def fields(transition: Any, session_id: int | None = None) -> dict[str, Any]:
        body = {"observation": transition.observation, "reward": transition.reward}
        body["done"] = transition.done
        return body if session_id is None else {"id": session_id, **body}

    @app.get("/")
    def hello() -> str:
        return "This is environment TextCraft."

    @app.post("/create")
    def create(body: _Create) -> dict[str, Any]:
        session_id = len(sessions)
        sessions[session_id] = environment.open_session()
        return fields(sessions[session_id].reset(session_id), session_id)

    @app.post("/reset")
    def reset(body: _Reset) -> dict[str, Any]:
        if body.id not in sessions:
            return {"error": f"The id {body.id} is not valid."}
        return fields(sessions[body.id].reset(body.data_idx), body.id)

    @app.post("/step")
    def step(body: _Step) -> dict[str, Any]:
        if body.id not in sessions:
            return {"error": f"The id {body.id} is not valid."}
        return fields(sessions[body.id].step(body.action))

    return app


@contextmanager
def agentgym_style_server() -> Iterator[str]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(build_app(), port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
