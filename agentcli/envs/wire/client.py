"""Async client for environment servers: ours, and AgentGym's for the same environment.

Each session talks over a keep-alive connection of its own: httpx's pool scans every
connection it holds on each request, which with dozens of sessions in one pool cost more CPU
than the env step itself. Connection errors, and 503s that mean "busy" (ours say when to
retry; behind AgentGym's webshop client any 503 does), are retried with exponential backoff
(bounded). A server that restarts loses its sessions: a session that notices (our server's
boot id changed, or the server answers 404 with an error saying it no longer knows the id)
re-creates itself, resets to its item and replays the actions taken so far, which gives back
the same state because environments are deterministic per item. A 404 without an error body
is a route the server does not have (AgentGym's have no /tasks, /expert, /health, and
webshop's and alfworld's no /close): never a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import httpx

from agentcli.common import tls_context
from agentcli.envs.base import PromptStyle, Transition
from agentcli.envs.registry import get_spec
from agentcli.envs.wire.format import WireFormat
from agentcli.envs.wire.protocol import transition_from_payload
from agentcli.errors import (
    AgentGymError,
    EnvServerError,
    NoExpertError,
    UnreachableError,
    WrongServerError,
)

log = logging.getLogger("agentgym.client")
BOOT_HEADER = "x-agentgym-boot"
# How long a cancelled create still waits for its answer, to close what the server opened
# (sciworld's take ~1.3 s): a Ctrl-C during a create never hangs on a stuck server.
CANCELLED_CREATE_WAIT_S = 10.0
_RETRYABLE = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError)
# A connection that drops while a request is on it (reset by the server, or by anything
# between): the request may or may not have been played.
_DROPPED = (httpx.ReadError, httpx.WriteError)
# Below uvicorn's keep-alive timeout (5 s, which AgentGym's servers and ours keep): a client
# that reuses a connection as the server closes it for idleness gets it reset mid-request,
# which a loaded machine, where a session waits long on its model, makes frequent.
KEEPALIVE_EXPIRY_S = 3.0


class SessionLostError(EnvServerError):
    """The server no longer knows this session (it restarted or reaped it)."""

    def __init__(self, message: str, *, restarted: bool) -> None:
        super().__init__(message)
        self.restarted = restarted  # a new server process, which hands out ids from 0 again


class MissingRouteError(EnvServerError):
    """The server has no such route (404 with no error body): e.g. AgentGym's have no /tasks."""


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
        self.wire: WireFormat = get_spec(env).wire
        self.retries = retries
        self.backoff_s = backoff_s
        self.boot_id: str | None = None
        self.timeout_s = timeout_s
        self.has_close = True  # until the server answers that it has no /close
        self._connections: set[httpx.AsyncClient] = set()
        self._http = self.connection()  # calls outside a session

    def connection(self) -> httpx.AsyncClient:
        """A keep-alive connection to the server; ``aclose`` closes those still open."""
        http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=self.timeout_s,
            limits=httpx.Limits(keepalive_expiry=KEEPALIVE_EXPIRY_S),
            verify=tls_context(),
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
            except _DROPPED as exc:
                if _is_session_call(path):
                    # Whether the call was played is unknown: the session replays its actions
                    # on a new one (SessionLostError), which holds whatever happened.
                    raise SessionLostError(
                        f"the connection dropped during {method} {path} ({type(exc).__name__})",
                        restarted=False,
                    ) from exc
                if attempt == self.retries:
                    raise UnreachableError(
                        f"the {self.env} server at {self.base_url} kept dropping the connection"
                        f" ({type(exc).__name__}); check its log and the network in between"
                    ) from exc
            except httpx.TimeoutException as exc:
                raise EnvServerError(
                    f"the {self.env} server at {self.base_url} did not answer {method} {path} "
                    "in time; raise the timeout or check the server's load"
                ) from exc
            else:
                if not self._busy(response) or attempt == self.retries:
                    return self._read(response, method, path)
            await asyncio.sleep(self.backoff_s * 2**attempt)
        raise AssertionError("unreachable")

    def _busy(self, response: httpx.Response) -> bool:
        """A 503 worth retrying: one with Retry-After (ours, when full), or any on a wire whose
        servers answer 503 when busy (webshop's). Ours without it: the env cannot run there."""
        if response.status_code != 503:
            return False
        return "retry-after" in response.headers or self.wire.any_503_is_busy

    def _read(self, response: httpx.Response, method: str, path: str) -> Any:
        boot = response.headers.get(BOOT_HEADER)
        restarted = boot is not None and self.boot_id is not None and boot != self.boot_id
        self.boot_id = boot or self.boot_id
        try:
            body = response.json()
        except ValueError:
            body = None
        # AgentGym's servers report errors as HTTP 200 with an "error" field.
        error = body.get("error") if isinstance(body, dict) else None
        if response.status_code == 404 and error is None:
            raise MissingRouteError(
                f"the {self.env} server at {self.base_url} has no {method} {path}"
            )
        if _is_session_call(path) and (response.status_code == 404 or restarted):
            message = f"server restarted (boot id {boot})" if restarted else error
            raise SessionLostError(message, restarted=restarted)
        if response.status_code >= 400 or error is not None:
            said = error if error is not None else response.text[:200]
            raise EnvServerError(
                f"{self.env} server: {method} {path} failed ({response.status_code}): {said}"
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

    async def require_expert(self) -> None:
        """Refuse, before any session opens, a server without ``/expert`` (AgentGym's have
        none): asking about a session that cannot exist tells whether the route is there."""
        try:
            await self.request("GET", "/expert", params={self.wire.id_field: -1})
        except MissingRouteError:
            raise self._no_expert() from None
        except SessionLostError:
            return  # ours: the route is there, and (as asked) no session -1

    def _no_expert(self) -> NoExpertError:
        if get_spec(self.env).load is None:
            return NoExpertError(
                f"the {self.env} server at {self.base_url} has no /expert, and agentgym has"
                f" only a client for {self.env}, so no oracle plays it: use a model policy"
            )
        return NoExpertError(
            f"the {self.env} server at {self.base_url} has no /expert: the oracle needs a"
            f" built-in server; start one with `agentgym env serve {self.env}`"
        )

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
        self.observation = ""  # the last reset's or step's, which a rule baseline acts on
        self._http = client.connection()

    async def create(self) -> None:
        """Open the session on the server. Cancelled meanwhile (a rollout stopping), it still
        waits a while for the answer and closes what the server opened: a server opens the session
        either way, and an id never read leaks it (a JVM on sciworld, for good on AgentGym's
        servers, which never reap)."""
        style = {"style": self.client.style} if self.client.style else {}
        answer = asyncio.ensure_future(self._request("POST", "/create", json=style))
        try:
            body = await asyncio.shield(answer)
        except asyncio.CancelledError:
            with contextlib.suppress(AgentGymError, TimeoutError):
                self._read_id(await asyncio.wait_for(answer, CANCELLED_CREATE_WAIT_S))
                await self._close_on_server()
            raise
        self._read_id(body)

    def _read_id(self, body: Any) -> None:
        self.id = body if isinstance(body, int) else body[self.client.wire.id_field]

    async def reset(self, index: int) -> Transition:
        self.index, self.actions = index, []
        transition = await self._recovering(self._reset)
        self.observation = transition.observation
        return transition

    async def step(self, action: str) -> Transition:
        transition = await self._recovering(lambda: self._step(action))
        self.actions.append(action)
        self.observation = transition.observation
        return transition

    async def expert_action(self) -> str | None:
        try:
            return (await self._recovering(lambda: self._get("/expert")))["action"]
        except MissingRouteError:
            raise self.client._no_expert() from None

    async def close(self) -> None:
        if self.id is None:
            return
        try:
            await self._close_on_server()
        finally:
            self.id = None
            await self.client.release(self._http)

    async def _close_on_server(self) -> None:
        """POST /close for this session; a server without /close (AgentGym's webshop and
        alfworld) is told once, in a warning, that its sessions stay open."""
        if not self.client.has_close:
            return
        try:
            with contextlib.suppress(SessionLostError):  # gone with a restart or the reaper
                await self._request("POST", "/close", json={self.client.wire.id_field: self.id})
        except MissingRouteError:
            self.client.has_close = False
            log.warning(
                "the %s server at %s has no /close: it keeps every session it opened until"
                " it restarts",
                self.client.env,
                self.client.base_url,
            )

    async def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        return await self.client.request(method, path, via=self._http, **kwargs)

    async def _get(self, path: str) -> Any:
        return await self._request("GET", path, params={self.client.wire.id_field: self.id})

    async def _reset(self) -> Transition:
        wire = self.client.wire
        body = await self._request("POST", "/reset", json=wire.reset_body(self.id, self.index))
        fields = body if isinstance(body, dict) else {}  # WebShop answers [observation, None]
        if (
            wire.failed_reset is not None
            and fields.get(wire.observation_field) == wire.failed_reset
        ):
            raise EnvServerError(
                f"the {self.client.env} server at {self.client.base_url} could not reset item"
                f" {self.index} (it answers {wire.failed_reset!r} for any failure: a site"
                " down, an expired login, no such task); check its log and its sites"
            )
        if wire.observe_after_reset:
            fields = {**fields, wire.observation_field: await self._get("/observation")}
        return transition_from_payload(fields, wire)

    async def _step(self, action: str) -> Transition:
        wire = self.client.wire
        body = {wire.id_field: self.id, "action": wire.action_format.format(action=action)}
        return transition_from_payload(await self._request("POST", "/step", json=body), wire)

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
            if not lost.restarted:
                # Best effort: the server said it lost the id, but were it wrong, the old
                # session (a JVM on sciworld) would leak. After a restart the new process
                # hands out ids from 0 again: closing ours there would end someone else's.
                with contextlib.suppress(EnvServerError):
                    await self._close_on_server()
            await self.create()
            await self._reset()
            for action in self.actions:
                await self._step(action)
            return await call()


def _is_session_call(path: str) -> bool:
    return path not in ("/create", "/tasks", "/privileged")
