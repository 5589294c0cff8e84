"""The oracle teacher: a built-in environment's own expert, run in this process.

It replays episodes in the simulator. ``annotate`` writes each expert step's reason from
the expert's plan (``Session.explain``); ``correct`` walks a student's episode action by
action and, before each one, asks the expert what it would do in the student's own state
(on-policy expert labelling, as DAgger and LEAP do). One walk per episode suffices because
asking the expert changes nothing (see ``Session.expert_action``): the answer at step t is
what a fresh replay of the student's actions 0..t-1 would get.

Simulator work blocks, so each episode runs in a worker thread; at most ``concurrency``
episodes run at once, each on a session taken from a pool (a sciworld session is a JVM:
the pool starts at most ``concurrency`` of them and reuses them).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import TypeVar

from agentcli.conversation import episode_style, is_invalid_reply, observation_text
from agentcli.envs.base import Environment, PromptStyle, Session, Transition
from agentcli.envs.registry import get_spec
from agentcli.envs.wire.protocol import as_received
from agentcli.errors import AgentGymError, EnvUnavailableError, UsageError
from agentcli.records import (
    Correction,
    CorrectionStep,
    Episode,
    PrivilegedState,
    Step,
    item_id,
)

ResultT = TypeVar("ResultT")


class OracleTeacher:
    """The ``Teacher`` of a built-in env with an expert. ``correct`` needs no privileged
    state: the simulator it replays in knows everything."""

    name = "oracle"

    def __init__(self, env: str, *, concurrency: int = 4) -> None:
        spec = get_spec(env)
        if spec.load is None:
            raise UsageError(
                f"{env} has no simulator in agentgym, so there is no oracle teacher for it: "
                "use --teacher openai"
            )
        problem = spec.missing()
        if problem:
            raise EnvUnavailableError(problem)
        self._spec = spec
        self._environment: Environment | None = None
        self._loading = asyncio.Lock()
        self._slots = asyncio.Semaphore(concurrency)
        self._idle: dict[PromptStyle, list[Session]] = {"agentgym": [], "native": []}

    async def annotate(self, demo: Episode) -> Episode:
        def explain_steps(session: Session) -> Episode:
            steps = [
                step.model_copy(update={"reason": session.explain(step.action)})
                for _, step in self._replay(session, demo)
            ]
            return demo.model_copy(update={"steps": steps})

        return await self._in_session(explain_steps, episode_style(demo))

    async def extract_state(self, index: int, demo: Episode | None) -> PrivilegedState:
        environment = await self._loaded()
        async with self._slots:
            text = await asyncio.to_thread(environment.privileged_state, index)
        return PrivilegedState(item_id=item_id(self._spec.name, index), text=text)

    async def correct(self, episode: Episode, state: PrivilegedState | None) -> Correction:
        def label_steps(session: Session) -> Correction:
            steps = [
                _label(t, step, session, sent=_was_sent(episode, t))
                for t, step in self._replay(session, episode)
            ]
            summary = _summary(episode, steps)
            return Correction(item_id=episode.item_id, summary=summary, steps=steps)

        return await self._in_session(label_steps, episode_style(episode))

    async def aclose(self) -> None:
        idle, self._idle = self._idle, {"agentgym": [], "native": []}
        for session in [*idle["agentgym"], *idle["native"]]:
            await asyncio.to_thread(session.close)

    async def _loaded(self) -> Environment:
        async with self._loading:
            if self._environment is None:
                self._environment = await asyncio.to_thread(self._spec.load)
        return self._environment

    async def _in_session(self, work: Callable[[Session], ResultT], style: PromptStyle) -> ResultT:
        """``work`` in a session worded as the episode was (babyai's server words its own)."""
        environment = await self._loaded()
        async with self._slots, self._session(environment, style) as session:
            return await asyncio.to_thread(work, session)

    @asynccontextmanager
    async def _session(
        self, environment: Environment, style: PromptStyle
    ) -> AsyncIterator[Session]:
        idle = self._idle[style]
        session = idle.pop() if idle else None
        if session is None:
            session = await asyncio.to_thread(environment.open_session, style)
        try:
            yield session
        except AgentGymError:
            idle.append(session)  # a refused episode or item: the next reset serves
            raise
        except BaseException:
            # a simulator that crashed mid-episode may be broken (a dead JVM): do not reuse it
            await asyncio.to_thread(session.close)
            raise
        idle.append(session)

    def _replay(self, session: Session, episode: Episode) -> Iterator[tuple[int, Step]]:
        """Each step of ``episode`` while ``session`` is in the state the agent acted from.

        The simulator's answers are checked against what the episode recorded: an episode
        played by another simulator (or version) would get labels for states it never saw.
        """
        if episode.env != self._spec.name:
            raise UsageError(
                f"{episode.item_id} is a {episode.env} episode; this oracle teaches "
                f"{self._spec.name}: pass --env {episode.env}"
            )
        wire = self._spec.wire
        style = episode_style(episode)
        transition = as_received(session.reset(episode.index), wire, reset=True)
        self._check(episode, 0, observation_text(transition, first=True, style=style))
        for t, step in enumerate(episode.steps):
            yield t, step
            if not _was_sent(episode, t):
                continue
            transition = as_received(session.step(step.action), wire, reset=False)
            if t + 1 < len(episode.steps):
                later = observation_text(transition, first=False, style=style)
                self._check(episode, t + 1, later)
            else:
                self._check_final(episode, transition)

    def _check(self, episode: Episode, t: int, observation: str) -> None:
        if t < len(episode.steps) and episode.steps[t].observation.strip() != observation.strip():
            raise _diverged(episode, f"step {t}'s observation")

    def _check_final(self, episode: Episode, transition: Transition) -> None:
        final = episode.final_observation
        if final is not None and final.strip() != transition.observation.strip():
            raise _diverged(episode, "the final observation")


def _diverged(episode: Episode, where: str) -> AgentGymError:
    return AgentGymError(
        f"{episode.item_id}: replaying its actions here gives another {where} than the episode "
        "recorded, so it was played in another simulator or version; the oracle teacher can "
        "only label episodes of agentgym's own envs (use --teacher openai for the others)"
    )


def _was_sent(episode: Episode, t: int) -> bool:
    """Whether step t's action reached the env (a reply without an action never does)."""
    answer = (
        episode.steps[t + 1].observation
        if t + 1 < len(episode.steps)
        else episode.final_observation
    )
    return not is_invalid_reply(answer)


def _label(t: int, step: Step, session: Session, *, sent: bool) -> CorrectionStep:
    expert = session.expert_action()
    if expert is None:  # the expert is lost here: nothing to teach, the step stays as it was
        corrected_reason, corrected_action, differs = step.reason, step.action, False
    else:
        corrected_reason, corrected_action = session.explain(expert), expert
        differs = not sent or _words(step.action) != _words(expert)
    return CorrectionStep(
        t=t,
        observation=step.observation,
        original_reason=step.reason,
        original_action=step.action,
        corrected_reason=corrected_reason,
        corrected_action=corrected_action,
        is_corrected=differs,
    )


def _words(action: str) -> list[str]:
    return action.lower().split()


def _summary(episode: Episode, steps: list[CorrectionStep]) -> str:
    """One line on what went wrong: how many actions the expert would change, the first one."""
    outcome = "succeeded" if episode.success else "failed"
    corrected = [step for step in steps if step.is_corrected]
    invalid = sum(not _was_sent(episode, t) for t in range(len(steps)))
    line = (
        f"The episode {outcome} after {len(steps)} steps; the expert would change "
        f"{len(corrected)} of them"
    )
    if corrected:
        first = corrected[0]
        student = f"'{first.original_action}'" if first.original_action else "no action"
        line += f", first at step {first.t} ({student} instead of '{first.corrected_action}')"
    if invalid:
        line += f"; {invalid} replies had no valid action"
    return line + "."
