"""The local web server of ``agentgym view``: the page (HTML, CSS and JS shipped in the
package, no build step, nothing from the network) and the JSON it reads (``agentcli.view.pages``).

Routes: ``/`` the page; ``/assets/<file>``; ``/api/overview``; ``/api/list?d=&page=&…filters``;
``/api/episode?d=&row=``; ``/api/raw?d=&row=`` (the record's line as the file holds it);
``/api/plot`` (the run's report.png). Errors are a status with a JSON ``{"error": …}`` body.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, Response

from agentcli.errors import UsageError
from agentcli.view.pages import View, filters_from
from agentcli.view.source import open_source

ASSETS = ("app.js", "style.css")
_MEDIA = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}


def asset(name: str) -> bytes:
    """A file of the page, from the package (``agentcli/view/static``)."""
    return resources.files("agentcli.view").joinpath("static", name).read_bytes()


def create_app(view: View, on_ready: Callable[[], None] | None = None) -> FastAPI:
    """The app over ``view``; ``on_ready`` is called once it is serving."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if on_ready is not None:
            on_ready()
        yield

    app = FastAPI(
        title="agentgym view", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )

    @app.exception_handler(UsageError)
    async def _usage(request: Request, error: UsageError) -> JSONResponse:
        return JSONResponse({"error": str(error)}, status_code=404)

    @app.get("/")
    def page() -> Response:
        return Response(asset("index.html"), media_type="text/html")

    @app.get("/assets/{name}")
    def static(name: str) -> Response:
        if name not in ASSETS:
            return JSONResponse({"error": f"no asset {name!r}"}, status_code=404)
        return Response(asset(name), media_type=_MEDIA[Path(name).suffix])

    @app.get("/api/overview")
    def overview() -> dict[str, Any]:
        return view.overview()

    @app.get("/api/list")
    def list_page(request: Request, d: str, page: int = 0) -> dict[str, Any]:
        return view.list_page(d, filters_from(dict(request.query_params)), page)

    @app.get("/api/episode")
    def episode(d: str, row: int) -> dict[str, Any]:
        return view.episode_page(d, row)

    @app.get("/api/raw")
    def raw(d: str, row: int) -> Response:
        return Response(view.raw(d, row), media_type="application/json")

    @app.get("/api/plot")
    def plot() -> Response:
        path = view.plot_path()
        if path is None:
            return JSONResponse({"error": "the run has no report.png"}, status_code=404)
        return FileResponse(path, media_type="image/png")

    return app


@dataclass
class BoundServer:
    """A view server with its socket bound (so a port in use fails before anything is
    indexed, and port 0 gets a free port to print), ready to ``run``."""

    view: View
    sock: socket.socket
    url: str

    def run(self, on_ready: Callable[[], None] | None = None) -> None:
        """Serve until interrupted (Ctrl-C, SIGTERM); ``on_ready`` once it answers."""
        from agentcli import serving

        app = create_app(self.view, on_ready)
        server = serving.server(app, log_level="warning", access_log=False)
        # Ctrl-C is how a view ends (uvicorn raises it again once it has shut down), not an
        # interruption of work to resume
        with self.sock, contextlib.suppress(KeyboardInterrupt):
            server.run(sockets=[self.sock])


def bind(path: Path, host: str, port: int) -> BoundServer:
    """Open ``path`` as view reads it, index its files, and bind ``host:port``."""
    view = View(open_source(path))
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise UsageError(
            f"cannot listen on {host}:{port} ({error.strerror}): pick another port with --port"
            " (--port 0: any free one)"
        ) from None
    sock.listen(128)
    view.overview()  # index every file now, so the first page is answered at once
    bound_port = sock.getsockname()[1]
    shown_host = f"[{host}]" if family == socket.AF_INET6 else host
    return BoundServer(view, sock, f"http://{shown_host}:{bound_port}/")
