"""Our environments as TRL environments: ``GRPOTrainer(environment_factory=…)`` plays them.

TRL's protocol (``environment_factory``, TRL 1.16): the trainer builds one instance per
concurrent rollout and reuses it; before each rollout it calls ``reset(**row)`` with the
dataset row and appends the string it returns to the row's last user message; every other
public method is a tool the model calls in its chat template's tool-call format; and
``get_reward()`` scores the finished rollout.

What the student reads is what ``agentcli.conversation`` renders for rollouts and build-data:
the rows' prompts are the opening of the conversation (the env's instruction and the
acknowledgement, in the view's prompt style), ``reset`` gives the first observation and each
``act`` the next one, all through ``observation_text``. Only the reply differs: an action is a
call of the ``act`` tool, not an ``Action:`` line.

The env runs in this process (its ``EnvSpec.load()``) or on a server (ours or AgentGym's,
through ``agentcli.envs.wire.client``); the reward is the env's score of the episode's last state,
as an Episode records it.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol, TypeVar

from agentcli.agentgym_prompts import PromptStyle
from agentcli.conversation import (
    DEFAULT_VIEW,
    StudentView,
    chat_dicts,
    env_opening,
    invalid_reply_observation,
    observation_text,
    parse_reply,
    student_messages,
)
from agentcli.envs.base import Session, Transition
from agentcli.envs.registry import get_spec, require_simulator
from agentcli.envs.wire.client import EnvClient, RemoteSession
from agentcli.envs.wire.format import WireFormat
from agentcli.envs.wire.protocol import as_received
from agentcli.errors import UsageError
from agentcli.records import item_id, parse_item_id

EPISODE_OVER = "The episode is over: no more actions are taken."
NO_TURNS_LEFT = "No turns are left: the episode ended without reaching its goal."
SERVER_READY_TIMEOUT_S = 60.0

T = TypeVar("T")


class _Session(Protocol):
    """One live episode, driven synchronously (TRL calls ``reset`` and tools as plain calls)."""

    def reset(self, index: int) -> Transition: ...

    def step(self, action: str) -> Transition: ...


class AgentGymEnvironment:
    """One of our environments, one episode at a time, as TRL's GRPOTrainer drives it.

    Build it with ``environment_factory``; its public methods are what TRL reads: ``reset``,
    the ``act`` tool and ``get_reward``. Everything else is private on purpose, since TRL
    would offer any public method to the model as a tool.
    """

    def __init__(
        self, env: str, open_session: Callable[[], _Session], style: PromptStyle, max_turns: int
    ) -> None:
        self._env = env
        self._open_session = open_session
        self._style = style
        self._max_turns = max_turns
        self._session: _Session | None = None
        self._last: Transition | None = None
        self._turns = 0

    def reset(self, *, item_id: str, **row: Any) -> str:
        """Start the episode of the row's ``item_id``; the first observation, as rollouts show
        it (appended by TRL to the row's prompt, which ends in an empty user message)."""
        env, index = parse_item_id(item_id)
        if env != self._env:
            raise UsageError(
                f"a {self._env} environment was given the row of {item_id}: build the rows"
                f" with prompt_rows({self._env!r}, …), or pass a dict of factories, one per env"
            )
        if self._session is None:
            self._session = self._open_session()
        self._last = self._session.reset(index)
        self._turns = 0
        return observation_text(self._last, first=True, style=self._style)

    def act(self, action: str) -> str:
        """Take one action in the environment and read what happens.

        Args:
            action: One action, written as the task's instructions describe them.

        Returns:
            What the environment shows after the action.
        """
        if self._session is None or self._last is None:
            raise UsageError("act was called before reset: TRL resets every rollout first")
        if self._last.done:
            return EPISODE_OVER
        if self._turns >= self._max_turns:
            return NO_TURNS_LEFT
        self._turns += 1
        parsed = parse_reply(action)  # the same reading of an action as a rollout's
        if parsed.error:
            return invalid_reply_observation(parsed.error)
        self._last = self._session.step(parsed.action)
        return observation_text(self._last, first=False, style=self._style)

    def get_reward(self) -> float:
        """The env's score of the episode's last state (sciworld 0-100, others 0-1), what an
        Episode records as its reward."""
        return self._last.score if self._last is not None else 0.0


def environment_factory(
    env: str,
    *,
    server: str | None = None,
    view: StudentView = DEFAULT_VIEW,
    max_turns: int | None = None,
) -> Callable[[], AgentGymEnvironment]:
    """What ``GRPOTrainer(environment_factory=…)`` takes for ``env``: each call one
    environment, its sessions in this process, or on the server at ``server`` (ours or
    AgentGym's). ``max_turns`` caps the actions of an episode (default: the env's
    ``max_rounds``, as rollouts play it)."""
    spec = get_spec(env)
    _check_view(view)
    style = env_opening(env, spec.instruction, view).style
    turns = spec.max_rounds if max_turns is None else max_turns
    if turns < 1:
        raise UsageError(f"max_turns must be at least 1, not {turns}")
    open_session = _in_process(env, style) if server is None else _on_server(env, server, style)
    return functools.partial(AgentGymEnvironment, env, open_session, style, turns)


def prompt_rows(
    env: str, indices: Sequence[int], view: StudentView = DEFAULT_VIEW
) -> list[dict[str, Any]]:
    """One dataset row per item: ``prompt`` (the conversation's opening, ending in the empty
    user message ``reset`` fills with the first observation) and ``item_id``.
    ``datasets.Dataset.from_list`` makes the trainer's ``train_dataset`` of them."""
    _check_view(view)
    # student_messages with the observation left empty: it comes last in every view this
    # module accepts, so reset's text completes the very prompt a rollout shows
    opening = env_opening(env, get_spec(env).instruction, view)
    prompt = chat_dicts(student_messages(opening, [], "", view))
    return [{"prompt": prompt, "item_id": item_id(env, index)} for index in indices]


def _check_view(view: StudentView) -> None:
    """Refuse what a TRL rollout cannot show: it keeps the whole conversation, turn by turn."""
    if not view.whole_conversation:
        raise UsageError(
            f"a TRL rollout is one multi-turn conversation of every turn, and {view.why_not_whole}:"
            " use view.format=multi-turn and no view.history_steps"
        )


def _in_process(env: str, style: PromptStyle) -> Callable[[], _Session]:
    spec = get_spec(env)
    require_simulator(spec, otherwise=f"pass server=URL of a {env} server")
    environment = spec.load()
    wire = spec.wire
    return lambda: _InProcessSession(environment.open_session(style), wire)


class _InProcessSession:
    """A session of this process, read as a client reads the env's server: only the wire's
    fields survive, so the student reads what a rollout over HTTP shows it (babyai's server
    sends its available actions inside the observation, not as a list)."""

    def __init__(self, session: Session, wire: WireFormat) -> None:
        self._session = session
        self._wire = wire

    def reset(self, index: int) -> Transition:
        return as_received(self._session.reset(index), self._wire, reset=True)

    def step(self, action: str) -> Transition:
        return as_received(self._session.step(action), self._wire, reset=False)


def _on_server(env: str, server: str, style: PromptStyle) -> Callable[[], _Session]:
    async def ready() -> EnvClient:
        client = EnvClient(server, env, style=style)
        await client.wait_until_ready(SERVER_READY_TIMEOUT_S)
        return client

    client = _run(ready())

    def open_session() -> _Session:
        return _SyncRemoteSession(_run(client.open()))

    return open_session


class _SyncRemoteSession:
    """A server's session driven by plain calls, on the one loop its connections live on."""

    def __init__(self, session: RemoteSession) -> None:
        self._session = session

    def reset(self, index: int) -> Transition:
        return _run(self._session.reset(index))

    def step(self, action: str) -> Transition:
        return _run(self._session.step(action))


@functools.cache
def _client_loop() -> asyncio.AbstractEventLoop:
    """One event loop in a daemon thread for every server session of the process: httpx's
    connections belong to the loop that opened them, and TRL calls from its own threads."""
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, name="agentgym-env-client", daemon=True).start()
    return loop


def _run(call: Coroutine[Any, Any, T]) -> T:
    return asyncio.run_coroutine_threadsafe(call, _client_loop()).result()


def chatml_tool_template() -> str:
    """Qwen2.5's chat template as TRL ships it: ChatML that renders tool calls, and one whose
    replies TRL knows how to parse (``add_response_schema``). For a ChatML model whose own
    template has no tools (agentgym's tiny model, SmolLM2): TRL's environments need one."""
    import importlib.resources

    return (importlib.resources.files("trl") / "chat_templates" / "qwen2_5.jinja").read_text()
