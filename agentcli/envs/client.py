"""Async client for environment servers: ours, and AgentGym's for the same environment.

Each session talks over a keep-alive connection of its own: httpx's pool scans every
connection it holds on each request, which with dozens of sessions in one pool cost more CPU
than the env step itself. Connection errors, and 503s that say when to retry (a full server),
are retried with exponential backoff (bounded). A server that restarts loses its sessions:
a session that notices (our server's boot id changed, or the server no longer knows its id)
re-creates itself, resets to its item and replays the actions taken so far, which gives back
the same state because environments are deterministic per item.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import ssl
from typing import Any

import httpx

from agentcli.envs.base import PromptStyle, Transition
from agentcli.envs.protocol import WIRE_FORMATS, WireFormat, transition_from_payload
from agentcli.envs.registry import get_spec
from agentcli.errors import EnvServerError, UnreachableError, WrongServerError

log = logging.getLogger("agentgym.client")
BOOT_HEADER = "x-agentgym-boot"
_RETRYABLE = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError)


class SessionLostError(EnvServerError):
    """The server no longer knows this session (it restarted or reaped it)."""


class EnvClient:
    """One environment server. Use as ``async with EnvClient(url, "textcraft") as client``."""

    def __init__(
        self,
        base_url: str,
        env: str,
        *,
        timeout_s: float = 120.0,
        retries: int = 4,
        backoff_s: float = 0.25,
        style: PromptStyle | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.env = env
        self.style = style  # sent with POST /create: how babyai's server words a session
        self.wire: WireFormat = WIRE_FORMATS[get_spec(env).wire]
        self.retries = retries
        self.backoff_s = backoff_s
        self.boot_id: str | None = None
        self.timeout_s = timeout_s
        self._connections: set[httpx.AsyncClient] = set()
        self._http = self.connection()  # calls outside a session

    def connection(self) -> httpx.AsyncClient:
        """A keep-alive connection to the server; ``aclose`` closes those still open."""
        http = httpx.AsyncClient(
            base_url=self.base_url, timeout=self.timeout_s, verify=_tls_context()
        )
        self._connections.add(http)
        return http

    async def release(self, http: httpx.AsyncClient) -> None:
        self._connections.discard(http)
        await http.aclose()

    async def __aenter__(self) -> EnvClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        for http in list(self._connections):
            await self.release(http)

    async def request(
        self, method: str, path: str, *, via: httpx.AsyncClient | None = None, **kwargs: Any
    ) -> Any:
        """Send one request (over the connection ``via``, else the client's own); retry what
        never reached the server and 503s; raise on errors."""
        http = via or self._http
        for attempt in range(self.retries + 1):
            try:
                response = await http.request(method, path, **kwargs)
            except _RETRYABLE as exc:
                if attempt == self.retries:
                    raise UnreachableError(
                        f"cannot reach the {self.env} server at {self.base_url} "
                        f"({type(exc).__name__}); start one with `agentgym env serve {self.env}` "
                        "or check --env-server"
                    ) from exc
            except httpx.TimeoutException as exc:
                raise EnvServerError(
                    f"the {self.env} server at {self.base_url} did not answer {method} {path} "
                    "in time; raise the timeout or check the server's load"
                ) from exc
            else:
                busy = response.status_code == 503 and "retry-after" in response.headers
                if not busy or attempt == self.retries:
                    return self._read(response, method, path)
            await asyncio.sleep(self.backoff_s * 2**attempt)
        raise AssertionError("unreachable")

    def _read(self, response: httpx.Response, method: str, path: str) -> Any:
        boot = response.headers.get(BOOT_HEADER)
        restarted = boot is not None and self.boot_id is not None and boot != self.boot_id
        self.boot_id = boot or self.boot_id
        try:
            body = response.json()
        except ValueError:
            body = {"error": response.text[:200]}
        # AgentGym's servers report errors as HTTP 200 with an "error" field.
        error = body.get("error") if isinstance(body, dict) else None
        session_call = path not in ("/create", "/tasks", "/privileged")
        if session_call and (response.status_code == 404 or restarted):
            raise SessionLostError(error or f"server restarted (boot id {boot})")
        if response.status_code >= 400 or error is not None:
            raise EnvServerError(
                f"{self.env} server: {method} {path} failed ({response.status_code}): {error}"
            )
        return body

    async def wait_until_ready(self, timeout_s: float = 60.0) -> None:
        """Poll until the server answers; our servers answer ``/health`` once loaded."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while True:
            try:
                response = await self._http.get("/health")
                if response.status_code == 404:  # AgentGym's servers have no /health
                    response = await self._http.get("/")
                if response.status_code == 200:
                    self.boot_id = response.headers.get(BOOT_HEADER)
                    if self.boot_id:  # ours: /health names the env (AgentGym's servers do not)
                        self._check_serves(response.json().get("env"))
                    return
            except httpx.TransportError:
                pass
            if asyncio.get_running_loop().time() > deadline:
                raise EnvServerError(
                    f"the {self.env} server at {self.base_url} was not ready after "
                    f"{timeout_s:.0f} s; check that it started (its log says why not)"
                )
            await asyncio.sleep(0.2)

    def _check_serves(self, served: str | None) -> None:
        """Refuse a server that says it serves another env."""
        if served is not None and served != self.env:
            raise WrongServerError(
                f"the server at {self.base_url} serves {served}, not {self.env}: pass --env"
                f" {served}, or the URL of a {self.env} server"
            )

    async def splits(self) -> dict[str, int]:
        tasks = await self.request("GET", "/tasks")
        self._check_serves(tasks.get("env"))
        return tasks["splits"]

    async def split_indices(self, split: str) -> list[int]:
        return (await self.request("GET", "/tasks", params={"split": split}))["indices"]

    async def open(self) -> RemoteSession:
        session = RemoteSession(self)
        await session.create()
        return session


class RemoteSession:
    """One episode on a server: ``reset(index)``, ``step(action)``, ``close()``."""

    def __init__(self, client: EnvClient) -> None:
        self.client = client
        self.id: int | None = None
        self.index: int | None = None
        self.actions: list[str] = []
        self._http = client.connection()

    async def create(self) -> None:
        style = {"style": self.client.style} if self.client.style else {}
        body = await self._request("POST", "/create", json=style)
        self.id = body if isinstance(body, int) else body[self.client.wire.id_field]

    async def reset(self, index: int) -> Transition:
        self.index, self.actions = index, []
        return await self._recovering(self._reset)

    async def step(self, action: str) -> Transition:
        transition = await self._recovering(lambda: self._step(action))
        self.actions.append(action)
        return transition

    async def expert_action(self) -> str | None:
        return (await self._recovering(lambda: self._get("/expert")))["action"]

    async def close(self) -> None:
        if self.id is None:
            return
        try:
            with contextlib.suppress(SessionLostError):  # gone with a restart or the reaper
                await self._request("POST", "/close", json={self.client.wire.id_field: self.id})
        finally:
            self.id = None
            await self.client.release(self._http)

    async def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        return await self.client.request(method, path, via=self._http, **kwargs)

    async def _get(self, path: str) -> Any:
        return await self._request("GET", path, params={self.client.wire.id_field: self.id})

    async def _reset(self) -> Transition:
        wire = self.client.wire
        body = await self._request("POST", "/reset", json=wire.reset_body(self.id, self.index))
        if not isinstance(body, dict):  # WebShop answers [observation, None]
            body = {wire.observation_field: await self._get("/observation")}
        return transition_from_payload(body, wire)

    async def _step(self, action: str) -> Transition:
        body = {self.client.wire.id_field: self.id, "action": action}
        return transition_from_payload(
            await self._request("POST", "/step", json=body), self.client.wire
        )

    async def _recovering(self, call: Any) -> Any:
        try:
            return await call()
        except SessionLostError as lost:
            if self.index is None:
                raise
            log.warning(
                "%s session %s lost (%s): re-creating it at item %s and replaying %d actions",
                self.client.env,
                self.id,
                lost,
                self.index,
                len(self.actions),
            )
            await self.create()
            await self._reset()
            for action in self.actions:
                await self._step(action)
            return await call()


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every connection (an https server): building one takes ~25 ms."""
    return ssl.create_default_context()
