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
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from pydantic import Field, model_validator

from agentcli.common import END_CONTEXT, END_DONE, END_ERROR, END_MAX_ROUNDS, EndReason
from agentcli.config import CommandConfig, dump_config
from agentcli.conversation import (
    StudentView,
    env_opening,
    env_style,
    invalid_reply_observation,
    observation_text,
    parse_reply,
    student_messages,
    turn_text,
)
from agentcli.data.jsonl import append_records, read_records
from agentcli.envs.base import EnvSpec, Transition
from agentcli.envs.registry import SPECS, EnvName, get_spec, known_splits
from agentcli.envs.wire.client import EnvClient, MissingRouteError, RemoteSession
from agentcli.envs.wire.launcher import env_servers
from agentcli.errors import AgentGymError, FatalRunError, UsageError
from agentcli.items import HeldOutItems, ItemSelection
from agentcli.policy import PolicyConfig, build_policy, served_policy
from agentcli.policy.admissible import CHOSEN_BY_MODEL, ActionMode, nearest_admissible
from agentcli.policy.base import Policy, RankingPolicy
from agentcli.policy.streams import episode_stream
from agentcli.records import Episode, Step, item_id
from agentcli.resume import guard_output, weights_identity
from agentcli.trained_view import model_view_path, read_view, view_for

log = logging.getLogger("agentgym.rollout")


@dataclass
class RolloutStats:
    """What a run did; ``on_progress`` callbacks see it grow: once the items are known, then
    after each episode."""

    total: int
    skipped: int = 0
    finished: int = 0
    successes: int = 0
    errors: int = 0
    turns: int = 0
    started_at: float = 0.0

    @property
    def success_rate(self) -> float:
        return self.successes / self.finished if self.finished else 0.0

    @property
    def pending(self) -> int:
        """Items this run plays (those already finished are skipped)."""
        return self.total - self.skipped

    @property
    def episodes_per_s(self) -> float:
        return self._per_s(self.finished)

    @property
    def turns_per_s(self) -> float:
        return self._per_s(self.turns)

    def _per_s(self, count: int) -> float:
        elapsed = time.perf_counter() - self.started_at
        return count / elapsed if elapsed > 0 else 0.0


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
    actions: ActionMode = "free",
) -> Episode:
    """One episode; a policy or env failure ends it with the error recorded (and closes the
    seat's session, which may be what failed), never raises. The policy is shown the
    conversation as ``view`` renders it (``agentcli.conversation.student_messages``), the
    same rendering build-data trains on. With ``actions="admissible"`` a reply's action the
    env does not list is replaced by the nearest listed one (``meta["replaced_actions"]``);
    with ``actions="ranked"`` or ``"constrained"`` the policy (a ``RankingPolicy``) chooses
    among the listed actions' replies. An env that lists none leaves the policy to write its
    reply."""
    started = time.perf_counter()
    steps: list[Step] = []
    end_reason: EndReason = END_MAX_ROUNDS
    error, last = None, None
    tokens = {"prompt_tokens": 0, "completion_tokens": 0}
    replaced: list[dict[str, Any]] = []
    opening = env_opening(spec.name, spec.instruction, view)
    try:
        session = await seat.session()
        last = await session.reset(index)
        observation = observation_text(last, first=True, style=opening.style)
        for _ in range(max_rounds):
            offered = last.available_actions
            if offered is None and actions != "free" and spec.page_actions is not None:
                offered = spec.page_actions(last.observation)
            shown = student_messages(opening, steps, observation, view)
            if actions in CHOSEN_BY_MODEL and offered:
                listed = [turn_text("", action, view, opening.style) for action in offered]
                greedy = actions == "constrained"
                reply = await cast(RankingPolicy, policy).rank(shown, listed, greedy=greedy)
            else:
                reply = await policy.act(shown, session)
            tokens["prompt_tokens"] += reply.prompt_tokens
            tokens["completion_tokens"] += reply.completion_tokens
            if reply.context_exceeded:
                end_reason = END_CONTEXT
                break
            parsed = parse_reply(reply.text)
            if actions == "admissible" and offered and not parsed.error:
                chosen = nearest_admissible(parsed.action, offered)
                if chosen != parsed.action:
                    replaced.append({"t": len(steps), "reply": parsed.action, "action": chosen})
                    parsed = replace(parsed, action=chosen)
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
            observation = observation_text(last, first=False, style=opening.style)
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
        instruction=opening.instruction,
        steps=steps,
        final_observation=last.observation if steps and last else None,
        reward=last.score if last else 0.0,
        success=bool(last and last.success and end_reason == END_DONE),
        n_steps=len(steps),
        meta={
            **meta,
            "prompt": opening.style,
            **(spec.item_meta(index) if spec.item_meta else {}),
            "end_reason": end_reason,
            **({"error": error} if error else {}),
            **({"replaced_actions": replaced} if actions == "admissible" else {}),
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
    actions: ActionMode = "free",
    on_progress: Callable[[RolloutStats], None] | None = None,
) -> RolloutStats:
    """Run every item not already finished in ``out``; append each Episode as it ends."""
    done = finished_items(out)
    pending = [index for index in items if item_id(spec.name, index) not in done]
    stats = RolloutStats(total=len(items), skipped=len(items) - len(pending))
    stats.started_at = time.perf_counter()
    if on_progress:
        on_progress(stats)

    def record(_: int, episode: Episode) -> None:
        append_records(out, [episode])
        stats.finished += 1
        stats.successes += episode.success
        stats.errors += episode.meta["end_reason"] == END_ERROR
        stats.turns += episode.n_steps
        if on_progress:
            on_progress(stats)

    await play_items(
        spec,
        env_servers,
        policy,
        pending,
        split=split,
        concurrency=concurrency,
        max_rounds=max_rounds,
        view=view,
        meta=meta,
        actions=actions,
        on_episode=record,
    )
    return stats


async def play_items(
    spec: EnvSpec,
    env_servers: Sequence[str],
    policy: Policy,
    items: Sequence[int],
    *,
    split: str,
    concurrency: int,
    max_rounds: int | None = None,
    view: StudentView | None = None,
    meta: dict[str, Any] | None = None,
    actions: ActionMode = "free",
    on_episode: Callable[[int, Episode], None],
) -> None:
    """Play one episode of each of ``items`` (an item may come more than once) on
    ``concurrency`` seats; ``on_episode(position, episode)`` gets each as it ends, with the
    position of its item in ``items``."""
    if actions in CHOSEN_BY_MODEL and not isinstance(policy, RankingPolicy):
        raise UsageError(f"actions {actions} needs a policy that scores replies, not {policy.name}")
    style = env_style(spec.name, (view or StudentView()).prompt)
    clients = [EnvClient(url, spec.name, style=style) for url in env_servers]
    seats = [Seat(clients[number % len(clients)]) for number in range(concurrency)]
    # the seats take items in order, each when its last ends; an episode draws from the stream
    # of its item's n-th play (agentcli.policy.streams), whatever position or seat it gets
    plays = _earlier_plays(items)
    queue = iter(enumerate(items))
    meta = {"policy": policy.name, **(meta or {})}
    try:

        async def run_seat(seat: Seat) -> None:
            try:
                for position, index in queue:
                    with episode_stream(f"{item_id(spec.name, index)}#{plays[position]}"):
                        episode = await run_episode(
                            spec,
                            seat,
                            policy,
                            index,
                            split=split,
                            max_rounds=max_rounds or spec.max_rounds,
                            meta=meta,
                            view=view or StudentView(),
                            actions=actions,
                        )
                    on_episode(position, episode)
            finally:
                await seat.close()

        tasks = [asyncio.create_task(run_seat(seat)) for seat in seats]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            # one seat's fatal error ends the run: stop the others before their clients close
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
    finally:
        for client in clients:
            await client.aclose()


def _earlier_plays(items: Sequence[int]) -> list[int]:
    """For each position of ``items``, how often its item came before it."""
    seen: Counter[int] = Counter()
    earlier = []
    for index in items:
        earlier.append(seen[index])
        seen[index] += 1
    return earlier


class EpisodeSettings(CommandConfig):
    """How a rollout's episodes run, whoever plays them."""

    concurrency: int = Field(8, ge=1, description="Episodes in flight at once.")
    max_rounds: int | None = Field(None, ge=1, description="Turns per episode; default: the env's.")


class RolloutConfig(ItemSelection, EpisodeSettings):
    """``agentgym rollout`` (and ``collect``, which are rollouts too): items, how episodes
    run, then the target: the env, its servers, who plays, how it is shown, where it goes."""

    env: EnvName = Field(
        description="Environment (AgentGym calls it the task; see `agentgym env list`)."
    )
    env_server: list[str] = Field(
        default_factory=list,
        description="Env server URLs (round-robin); none: start a built-in server.",
    )
    policy: PolicyConfig = Field(default_factory=dict, description="Who plays.")
    view: StudentView = Field(
        default_factory=StudentView,
        description="How the policy is shown its episode; a trained model's own view (its"
        " student_view.json) unless set.",
    )
    other_view: bool = Field(
        False,
        description="Show a trained model view settings other than those it was trained with"
        " (its student_view.json); else such settings are refused.",
    )
    out: Path = Field(description="A .jsonl file, or a directory that gets episodes.jsonl.")
    overwrite: bool = Field(
        False, description="Replace the episodes already in out; else a rerun resumes them."
    )

    @model_validator(mode="after")
    def _model_view(self) -> RolloutConfig:
        """A model is shown the view it was trained with (``agentcli.trained_view``)."""
        model = self.policy.model
        if model is not None:
            learned = read_view(model_view_path(model))
            self.view = view_for(self.view, learned, of=str(model), other_view=self.other_view)
        if self.policy.actions in CHOSEN_BY_MODEL and self.view.reasons:
            raise ValueError(
                f"actions {self.policy.actions} scores each listed action as the model's whole"
                " reply, and a view with reasons (view.reasons: true) has the model write a"
                " reason first: use a model trained without reasons, or actions admissible"
            )
        return self

    def record_settings(self, spec: EnvSpec) -> dict[str, Any]:
        """What shapes each episode, kept beside the episodes: a rerun resumes only the same
        (the items, concurrency and servers may change)."""
        policy = self.policy
        return {
            "env": self.env,
            "split": self.split_name,
            "max_rounds": self.max_rounds or spec.max_rounds,
            "view": self.view.model_dump(),
            "policy": {
                "kind": policy.kind,
                "model": str(policy.model) if policy.model else None,
                "weights": weights_identity(policy.model) if policy.model else None,
                **policy.model_dump(
                    include={"model_name", "max_new_tokens", "temperature", "seed"}
                ),
                **({"expert": spec.expert} if policy.kind == "oracle" else {}),
                # only when set: the episodes of a run made before the setting resume as theirs
                **({"actions": policy.actions} if policy.actions != "free" else {}),
            },
            **({"task_types": self.task_types} if self.task_types else {}),  # the same: as above
        }

    @property
    def episodes_path(self) -> Path:
        return self.out if self.out.suffix == ".jsonl" else self.out / "episodes.jsonl"

    @property
    def config_path(self) -> Path:
        return self.side_file("config.yaml")

    def side_file(self, name: str) -> Path:
        """``config.yaml``, an engine's ``vllm.log`` and the like: in the output directory, or
        named after the output file."""
        base = self.episodes_path
        return base.with_name(f"{base.stem}.{name}") if self.out.suffix else base.parent / name


class EvalConfig(HeldOutItems, RolloutConfig):
    """``agentgym eval``: a rollout on held-out items, summarised; ``out`` defaults to
    ``runs/eval/<model>/<env>``, so that evals of two models never share a directory."""

    out: Path = Field(
        description="A .jsonl file, or a directory that gets episodes.jsonl; default:"
        " runs/eval/<model>/<env>."
    )

    @model_validator(mode="before")
    @classmethod
    def _default_out(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("out") is None and isinstance(data.get("env"), str):
            policy = data.get("policy") if isinstance(data.get("policy"), dict) else {}
            return {**data, "out": Path("runs") / "eval" / _model_label(policy) / data["env"]}
        return data


def _model_label(policy: dict[str, Any]) -> str:
    """A name for who plays, fit for a folder: the model directory's last parts (models are
    often all named ``model``: ``runs/x/iter1/model`` → ``x-iter1-model``), or the endpoint's
    model name."""
    if policy.get("model"):
        return "-".join(part for part in Path(policy["model"]).parts[-3:] if part != "/")
    if policy.get("model_name"):
        return str(policy["model_name"]).replace("/", "_")
    return str(policy.get("kind") or "model")


async def select_items(selection: ItemSelection, env: str, url: str) -> list[int]:
    """The items of ``selection.data``, else of the split the server at ``url`` lists, else
    (a server that lists none, as AgentGym's) of the split the env's own simulator here knows."""
    spec = get_spec(env)
    if selection.data is not None:
        return selection.chosen(env, {}, spec.goal_index, spec.categories)
    async with EnvClient(url, env) as client:
        try:
            counts = await client.splits()
        except MissingRouteError:
            splits = await asyncio.to_thread(known_splits, spec, url)
            return selection.chosen(env, splits, categorise=spec.categories)
        selection.require_split(env, counts)
        indices = await client.split_indices(selection.split)
        return selection.window(env, indices, spec.categories)


async def _require_expert(env: str, urls: Sequence[str]) -> None:
    """The oracle plays by asking each server for its expert's action: refuse a server that
    has none before any session opens on any of them."""
    for url in urls:
        async with EnvClient(url, env) as client:
            await client.require_expert()


def execute(
    config: RolloutConfig, on_progress: Callable[[RolloutStats], None] | None = None
) -> RolloutStats:
    """Check that a rerun resumes the same settings, build the policy (a local model starts
    loading in a worker thread), start servers if needed (the engine of a vllm / sglang policy,
    env servers), pick the items and run, save the config.

    The env servers start, and the episodes open and reset their sessions, while a local model
    loads: its first batch waits only for what remains of the load."""
    spec = get_spec(config.env)
    if config.policy.kind == "baseline" and spec.baseline is None:
        having = ", ".join(name for name, other in SPECS.items() if other.baseline)
        raise UsageError(
            f"{config.env} has no rule baseline (these envs have one: {having}): pass --model,"
            " --base-url or --policy oracle"
        )
    if config.policy.actions != "free" and not spec.lists_actions:
        listing = ", ".join(name for name, other in SPECS.items() if other.lists_actions)
        raise UsageError(
            f"{config.env}'s server sends no list of the actions a state admits, so actions"
            f" {config.policy.actions} would act as free: pass --actions free (envs that list"
            f" theirs: {listing})"
        )
    if config.policy.actions in CHOSEN_BY_MODEL and spec.page_actions is not None:
        raise UsageError(
            f"{config.env}'s pages list actions whose words the agent writes (a search's"
            f" keywords), which actions {config.policy.actions} cannot score as whole replies:"
            " pass --actions admissible or free"
        )
    guard_output(config.episodes_path, config.record_settings(spec), overwrite=config.overwrite)
    dump_config(config, config.config_path)
    with served_policy(config.policy, config.side_file) as served:
        policy = build_policy(
            config.policy, concurrency=config.concurrency, served=served, baseline=spec.baseline
        )
        with env_servers(spec, config.env_server) as urls:
            return _play(config, spec, urls, policy, on_progress)


def _play(
    config: RolloutConfig,
    spec: EnvSpec,
    urls: list[str],
    policy: Policy,
    on_progress: Callable[[RolloutStats], None] | None,
) -> RolloutStats:
    async def run() -> RolloutStats:
        try:
            if config.policy.kind == "oracle":
                await _require_expert(config.env, urls)
            items = await select_items(config, config.env, urls[0])
            return await run_rollout(
                spec,
                urls,
                policy,
                items,
                config.episodes_path,
                split=config.split_name,
                concurrency=config.concurrency,
                max_rounds=config.max_rounds,
                view=config.view,
                meta={"model": str(config.policy.model or config.policy.model_name or "")},
                actions=config.policy.actions,
                on_progress=on_progress,
            )
        finally:
            await policy.aclose()

    return asyncio.run(run())
