"""Run many episodes at once: env servers (round-robin) x a policy -> Episode records.

``concurrency`` seats run episodes side by side, each taking the next item when its episode
ends and resetting the env session it kept (as AgentGym resets one env per item), rather than
opening a session per item; a local model policy batches the turns that are pending across
episodes. Finished episodes are appended to the output
JSONL as they end, so a killed run loses only the episodes in flight, and a rerun skips
the items already finished (items that ended in an error are tried again).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from agentcli.common import END_CONTEXT, END_DONE, END_ERROR, END_MAX_ROUNDS, EndReason
from agentcli.config import CommandConfig, dump_config
from agentcli.conversation import (
    StudentView,
    invalid_reply_observation,
    observation_text,
    parse_reply,
    student_messages,
)
from agentcli.data.jsonl import append_records, read_records
from agentcli.data.records import Episode, Step, item_id, parse_item_id
from agentcli.envs.base import EnvSpec, Transition
from agentcli.envs.client import EnvClient, RemoteSession
from agentcli.envs.launcher import env_servers
from agentcli.envs.registry import get_spec
from agentcli.errors import AgentGymError, FatalRunError, UsageError
from agentcli.policy import PolicyConfig, build_policy
from agentcli.policy.base import Policy

log = logging.getLogger("agentgym.rollout")


@dataclass
class RolloutStats:
    """What a run did; ``on_episode`` callbacks see it grow."""

    total: int
    skipped: int = 0
    finished: int = 0
    successes: int = 0
    errors: int = 0
    started_at: float = 0.0

    @property
    def success_rate(self) -> float:
        return self.successes / self.finished if self.finished else 0.0

    @property
    def episodes_per_s(self) -> float:
        elapsed = time.perf_counter() - self.started_at
        return self.finished / elapsed if elapsed > 0 else 0.0


def finished_items(path: Path) -> set[str]:
    """Item ids already written to ``path`` whose episode did not end in an error."""
    if not path.exists():
        return set()
    return {
        episode.item_id
        for episode in read_records(path, Episode)
        if episode.meta.get("end_reason") != END_ERROR
    }


class Seat:
    """One of a rollout's places for an episode at a time, with the env session it keeps
    from one episode to the next: opened when first needed and again after a failure."""

    def __init__(self, client: EnvClient) -> None:
        self.client = client
        self._session: RemoteSession | None = None

    async def session(self) -> RemoteSession:
        if self._session is None:
            self._session = await self.client.open()
        return self._session

    async def close(self) -> None:
        """Closes the session (if any); the next episode opens a new one."""
        session, self._session = self._session, None
        if session is not None:
            try:
                await session.close()
            except AgentGymError as exc:
                log.debug("closing session for item %s: %s", session.index, exc)


async def run_episode(
    spec: EnvSpec,
    seat: Seat,
    policy: Policy,
    index: int,
    *,
    split: str,
    max_rounds: int,
    meta: dict[str, Any],
    view: StudentView,
) -> Episode:
    """One episode; a policy or env failure ends it with the error recorded (and closes the
    seat's session, which may be what failed), never raises. The policy is shown the
    conversation as ``view`` renders it (``agentcli.conversation.student_messages``), the
    same rendering build-data trains on."""
    started = time.perf_counter()
    steps: list[Step] = []
    end_reason: EndReason = END_MAX_ROUNDS
    error, last = None, None
    tokens = {"prompt_tokens": 0, "completion_tokens": 0}
    try:
        session = await seat.session()
        last = await session.reset(index)
        observation = observation_text(last, first=True)
        for _ in range(max_rounds):
            offered = last.available_actions
            shown = student_messages(spec.instruction, steps, observation, view)
            reply = await policy.act(shown, session)
            tokens["prompt_tokens"] += reply.prompt_tokens
            tokens["completion_tokens"] += reply.completion_tokens
            if reply.context_exceeded:
                end_reason = END_CONTEXT
                break
            parsed = parse_reply(reply.text)
            if parsed.error:
                last = Transition(observation=invalid_reply_observation(parsed.error))
            else:
                last = await session.step(parsed.action)
            steps.append(
                Step(
                    observation=observation,
                    reason=parsed.thought,
                    action=parsed.action,
                    reward=last.reward,
                    done=last.done,
                    candidate_actions=offered,
                )
            )
            if last.done:
                end_reason = END_DONE
                break
            observation = observation_text(last, first=False)
    except FatalRunError:
        raise  # no episode can run: stop the rollout with this one error
    except (AgentGymError, OSError) as exc:
        end_reason, error = END_ERROR, str(exc)
        log.warning("%s: %s", item_id(spec.name, index), exc)
        await seat.close()
    return Episode(
        item_id=item_id(spec.name, index),
        env=spec.name,
        split=split,
        instruction=spec.instruction,
        steps=steps,
        final_observation=last.observation if steps and last else None,
        reward=last.score if last else 0.0,
        success=bool(last and last.success and end_reason == END_DONE),
        n_steps=len(steps),
        meta={
            **meta,
            "end_reason": end_reason,
            **({"error": error} if error else {}),
            **tokens,
            "seconds": round(time.perf_counter() - started, 3),
        },
    )


async def run_rollout(
    spec: EnvSpec,
    env_servers: Sequence[str],
    policy: Policy,
    items: Sequence[int],
    out: Path,
    *,
    split: str,
    concurrency: int,
    max_rounds: int | None = None,
    view: StudentView | None = None,
    meta: dict[str, Any] | None = None,
    on_episode: Callable[[Episode, RolloutStats], None] | None = None,
) -> RolloutStats:
    """Run every item not already finished in ``out``; append each Episode as it ends."""
    done = finished_items(out)
    pending = [index for index in items if item_id(spec.name, index) not in done]
    stats = RolloutStats(total=len(items), skipped=len(items) - len(pending))
    stats.started_at = time.perf_counter()
    clients = [EnvClient(url, spec.name) for url in env_servers]
    seats = [Seat(clients[number % len(clients)]) for number in range(concurrency)]
    queue = iter(pending)  # the seats take items in order, each when its last episode ends
    meta = {"policy": policy.name, **(meta or {})}
    try:

        async def run_seat(seat: Seat) -> None:
            try:
                for index in queue:
                    episode = await run_episode(
                        spec,
                        seat,
                        policy,
                        index,
                        split=split,
                        max_rounds=max_rounds or spec.max_rounds,
                        meta=meta,
                        view=view or StudentView(),
                    )
                    append_records(out, [episode])
                    stats.finished += 1
                    stats.successes += episode.success
                    stats.errors += episode.meta["end_reason"] == END_ERROR
                    if on_episode:
                        on_episode(episode, stats)
            finally:
                await seat.close()

        await asyncio.gather(*(run_seat(seat) for seat in seats))
    finally:
        for client in clients:
            await client.aclose()
    return stats


class RolloutConfig(CommandConfig):
    """``agentgym rollout`` (and ``collect`` and ``eval``, which are rollouts too)."""

    env: str = Field(description="Environment (see `agentgym env list`).")
    split: str = Field("test", description="Which split's items to run.")
    limit: int | None = Field(None, ge=1, description="Run only the first N items.")
    skip: int = Field(
        0, ge=0, description="Skip the split's first N items (e.g. the ones the demos played)."
    )
    data: Path | None = Field(
        None, description="An AgentGym JSON file (e.g. an eval set): run its item ids instead."
    )
    env_server: list[str] = Field(
        default_factory=list,
        description="Env server URLs (round-robin); none: start a built-in server.",
    )
    concurrency: int = Field(8, ge=1, description="Episodes in flight at once.")
    max_rounds: int | None = Field(None, ge=1, description="Turns per episode; default: the env's.")
    view: StudentView = Field(
        default_factory=StudentView, description="How the policy is shown its episode."
    )
    out: Path = Field(description="A .jsonl file, or a directory that gets episodes.jsonl.")
    policy: PolicyConfig = Field(default_factory=lambda: PolicyConfig(kind="oracle"))

    @property
    def episodes_path(self) -> Path:
        return self.out if self.out.suffix == ".jsonl" else self.out / "episodes.jsonl"

    @property
    def config_path(self) -> Path:
        base = self.episodes_path
        return (
            base.with_name(base.stem + ".config.yaml")
            if self.out.suffix
            else base.parent / "config.yaml"
        )


def _items_from_file(path: Path, env: str) -> list[int]:
    try:
        entries = json.loads(path.read_text())
        ids = [entry["item_id"] for entry in entries]
    except (ValueError, TypeError, KeyError) as exc:
        raise UsageError(
            f"{path}: expected AgentGym JSON, a list of objects with an item_id ({exc})"
        ) from None
    indices = []
    for text in ids:
        named_env, index = parse_item_id(text)
        if named_env != env:
            raise UsageError(f"{path} holds {text!r}, not a {env} item; pass --env {named_env}")
        indices.append(index)
    return list(dict.fromkeys(indices))


async def _select_items(config: RolloutConfig, url: str) -> list[int]:
    if config.data is not None:
        items = _items_from_file(config.data, config.env)
    else:
        async with EnvClient(url, config.env) as client:
            splits = await client.splits()
            if config.split not in splits:
                raise UsageError(
                    f"{config.env} has no split {config.split!r}; it has {', '.join(splits)}"
                )
            items = await client.split_indices(config.split)
    items = items[config.skip :]
    return items[: config.limit] if config.limit else items


def execute(
    config: RolloutConfig, on_episode: Callable[[Episode, RolloutStats], None] | None = None
) -> RolloutStats:
    """Start servers if needed, pick the items, build the policy, run, save the config."""
    spec = get_spec(config.env)
    dump_config(config, config.config_path)
    with env_servers(spec, config.env_server) as urls:
        policy = build_policy(config.policy, concurrency=config.concurrency)

        async def run() -> RolloutStats:
            try:
                items = await _select_items(config, urls[0])
                return await run_rollout(
                    spec,
                    urls,
                    policy,
                    items,
                    config.episodes_path,
                    split="custom" if config.data else config.split,
                    concurrency=config.concurrency,
                    max_rounds=config.max_rounds,
                    view=config.view,
                    meta={"model": str(config.policy.model or config.policy.model_name or "")},
                    on_episode=on_episode,
                )
            finally:
                await policy.aclose()

        return asyncio.run(run())
