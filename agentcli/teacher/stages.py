"""The teacher stages — ``annotate``, ``extract-state``, ``correct`` — over many records.

Each stage picks its records, hands each to the teacher with at most ``concurrency`` in
flight, and appends every result to its output JSONL as it comes (keyed by ``item_id``). A
rerun skips what the output holds. An item whose teacher call fails is listed in the
failures file with the reason and tried again on the next run; the file always lists each
failing item once, as of its last try. A failure no item can survive (the endpoint out of
reach, the key refused) stops the stage; so does ``--max-cost``, cleanly: calls in flight
finish and are written, no new one starts, and the stage ends with ``BudgetExceededError``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, Field, model_validator

from agentcli.common import END_ERROR
from agentcli.config import CommandConfig, dump_config
from agentcli.data.jsonl import append_records, done_ids, read_records, write_records
from agentcli.envs.registry import EnvName, get_spec
from agentcli.errors import AgentGymError, BudgetExceededError, FatalRunError, UsageError
from agentcli.items import ItemSelection
from agentcli.records import Episode, PrivilegedState, Record, item_id
from agentcli.resume import fingerprint, guard_output, refuse_other_settings
from agentcli.run_layout import RunLayout
from agentcli.teacher import TeacherConfig, build_teacher, served_teacher
from agentcli.teacher.base import Teacher
from agentcli.teacher.ledger import now
from agentcli.teacher.llm_client import ClientStats, NotSent

log = logging.getLogger("agentgym.teacher")


class Failure(Record):
    item_id: str
    reason: str
    time: str


@dataclass
class StageStats:
    """What a stage did; ``on_item`` callbacks see it grow."""

    stage: str
    output: Path
    total: int  # items selected, including those already done
    skipped: int = 0  # already in the output
    done: int = 0
    failed: int = 0
    dry_run: bool = False
    estimated: int = 0  # dry run: items whose requests were estimated, not sent
    stopped: int = 0  # items left undone when --max-cost stopped the stage
    started_at: float = field(default_factory=time.perf_counter)
    failures: Path | None = None
    calls: ClientStats | None = None  # an LLM teacher's requests
    spent: float = 0.0  # the ledger's total, this run and earlier ones

    @property
    def items_per_s(self) -> float:
        elapsed = time.perf_counter() - self.started_at
        return (self.done + self.failed) / elapsed if elapsed > 0 else 0.0


OnItem = Callable[[StageStats], None]
Work = Callable[[], Awaitable[BaseModel]]


# --- configs ------------------------------------------------------------------------------------


class StageConfig(CommandConfig):
    env: EnvName = Field(
        description="Environment (AgentGym calls it the task; see `agentgym env list`)."
    )
    out: Path | None = Field(
        None, description="A .jsonl file, or a directory; default: beside the input."
    )
    teacher: TeacherConfig = Field(default_factory=TeacherConfig, description="Who teaches.")
    overwrite: bool = Field(
        False, description="Replace the records already in out; else a rerun resumes them."
    )

    def record_settings(self) -> dict[str, Any]:
        """What shapes each record, kept beside the records: a rerun resumes only the same
        (concurrency, retries, the budget and the endpoint's URL may change)."""
        teacher = self.teacher
        shaping = {"temperature", "max_tokens", "structured_output"}
        shaping |= {"model_name"} if teacher.kind == "openai" else {"model", "args"}
        return {
            "env": self.env,
            "teacher": {
                "kind": teacher.kind,
                **(
                    teacher.model_dump(include=shaping)
                    if teacher.is_llm
                    else {"expert": get_spec(self.env).expert}
                ),
            },
            "inputs": {name: fingerprint(path) for name, path in self.inputs().items()},
        }

    def inputs(self) -> dict[str, Path]:
        """The files the records are made from, by name."""
        return {}

    @property
    def output_path(self) -> Path:
        assert self.out is not None  # each stage fills in its default
        return self.out if self.out.suffix == ".jsonl" else self.out / self.default_name

    def side_file(self, name: str) -> Path:
        """``failures.jsonl`` and the like: in an output directory, or named after the file."""
        assert self.out is not None
        if self.out.suffix == ".jsonl":
            return self.out.with_name(f"{self.out.stem}.{name}")
        return self.out / name

    default_name: ClassVar[str]  # the output's name in an output directory


class AnnotateConfig(StageConfig):
    """``agentgym annotate``: write the reason behind every expert action of the demos."""

    demos: Path = Field(description="Expert demos (Episodes JSONL), e.g. from `collect`.")
    default_name: ClassVar[str] = "demos.annotated.jsonl"

    def inputs(self) -> dict[str, Path]:
        return {"demos": self.demos}

    @model_validator(mode="after")
    def _default_out(self) -> AnnotateConfig:
        if self.out is None:
            self.out = self.demos.with_name(f"{self.demos.stem}.annotated.jsonl")
        return self


class ExtractStateConfig(StageConfig, ItemSelection):
    """``agentgym extract-state``: what a teacher may know about each task (the items of the
    demos, or without them, of the item selection)."""

    demos: Path | None = Field(
        None, description="Expert demos to read the state from (an LLM teacher needs them)."
    )
    default_name: ClassVar[str] = "privileged_state.jsonl"

    def inputs(self) -> dict[str, Path]:
        return {"demos": self.demos} if self.demos is not None else {}

    @model_validator(mode="after")
    def _default_out(self) -> ExtractStateConfig:
        if self.teacher.is_llm and self.demos is None:
            raise ValueError(
                "an LLM teacher reads the state out of expert demos: pass --demos"
                " (or --teacher oracle, which reads it from the simulator)"
            )
        if self.out is None:
            if self.demos is None:
                raise ValueError("without --demos, say where to write: pass --out")
            self.out = self.demos.parent / self.default_name
        return self


class EpisodeSelection(CommandConfig):
    """Which of the student's episodes the teacher corrects."""

    threshold: float | None = Field(
        None, description="Correct episodes with reward below this; default: failed episodes."
    )
    max_episodes: int | None = Field(None, ge=1, description="Correct at most N episodes.")


class CorrectConfig(StageConfig, EpisodeSelection):
    """``agentgym correct``: the teacher's better reason and action for each student step."""

    rollout: Path = Field(description="The student's episodes: a rollout dir or episodes.jsonl.")
    state: Path | None = Field(
        None,
        description="privileged_state.jsonl; default: the run's, when the rollout is in a run.",
    )
    default_name: ClassVar[str] = "corrections.jsonl"

    def inputs(self) -> dict[str, Path]:
        state = {"state": self.state} if self.state is not None else {}
        return {"rollout": self.episodes_path, **state}

    @model_validator(mode="after")
    def _defaults(self) -> CorrectConfig:
        run = RunLayout.of_rollout(self.rollout)
        if self.out is None:
            if run is not None:
                layout, k = run
                self.out = layout.corrections(k).parent
            else:  # a rollout folder of one's own gets its correction folder beside it
                folder = self.rollout if self.rollout.suffix != ".jsonl" else self.rollout.parent
                self.out = (folder.parent if folder.name == "rollout" else folder) / "correction"
        if self.state is None and run is not None:
            run_state = run[0].privileged_state
            self.state = run_state if run_state.exists() else None
        return self

    @property
    def episodes_path(self) -> Path:
        return self.rollout if self.rollout.suffix == ".jsonl" else self.rollout / "episodes.jsonl"


# --- the stages -----------------------------------------------------------------------------------


def annotate(config: AnnotateConfig, on_item: OnItem | None = None) -> StageStats:
    demos = _episodes_of(config.demos, config.env)

    def work(teacher: Teacher) -> list[tuple[str, Work]]:
        return [(demo.item_id, lambda demo=demo: teacher.annotate(demo)) for demo in demos]

    return _execute("annotate", config, work, on_item)


def extract_state(config: ExtractStateConfig, on_item: OnItem | None = None) -> StageStats:
    pairs: list[tuple[int, Episode | None]]
    if config.demos is not None:
        demos = _episodes_of(config.demos, config.env)[: config.limit]
        pairs = [(demo.index, demo) for demo in demos]
    else:
        pairs = [(index, None) for index in _selected_indices(config)]

    def work(teacher: Teacher) -> list[tuple[str, Work]]:
        return [
            (item_id(config.env, index), lambda i=index, d=demo: teacher.extract_state(i, d))
            for index, demo in pairs
        ]

    return _execute("extract_state", config, work, on_item)


def correct(config: CorrectConfig, on_item: OnItem | None = None) -> StageStats:
    episodes = select_episodes(
        _episodes_of(config.episodes_path, config.env), config.threshold, config.max_episodes
    )
    states: dict[str, PrivilegedState] = {}
    if config.state is not None:
        states = {state.item_id: state for state in read_records(config.state, PrivilegedState)}
    elif config.teacher.is_llm:
        log.warning("no privileged state (pass --state FILE): the teacher sees trajectories only")

    def work(teacher: Teacher) -> list[tuple[str, Work]]:
        return [
            (
                episode.item_id,
                lambda e=episode: teacher.correct(e, states.get(e.item_id)),
            )
            for episode in episodes
        ]

    return _execute("correct", config, work, on_item)


def select_episodes(
    episodes: Sequence[Episode], threshold: float | None, max_episodes: int | None
) -> list[Episode]:
    """The episodes worth correcting, by item index: failed ones (or those with reward below
    ``threshold``), at most ``max_episodes``. An item's last episode counts (a rollout rerun
    appends a new one after an error); episodes that ended in an error or took no step say
    nothing about the student and are left out."""
    latest = {episode.item_id: episode for episode in episodes}
    chosen = [
        episode
        for episode in latest.values()
        if episode.steps
        and episode.meta.get("end_reason") != END_ERROR
        and (not episode.success if threshold is None else episode.reward < threshold)
    ]
    chosen.sort(key=lambda episode: episode.index)
    return chosen[:max_episodes]


# --- running ------------------------------------------------------------------------------------


def _execute(
    stage: str,
    config: StageConfig,
    work: Callable[[Teacher], list[tuple[str, Work]]],
    on_item: OnItem | None,
) -> StageStats:
    from agentcli.teacher.llm import LLMTeacher

    dry_run = config.teacher.dry_run
    if dry_run and config.teacher.kind != "openai":
        raise UsageError(
            "--dry-run estimates what an endpoint charges; the oracle, or a model this stage"
            f" serves itself ({config.teacher.kind}), costs nothing"
        )
    failures = config.side_file("failures.jsonl")
    if dry_run:  # writes nothing, but estimates only what a real run would do
        refuse_other_settings(config.output_path, config.record_settings())
    else:
        guard_output(config.output_path, config.record_settings(), overwrite=config.overwrite)
        if config.overwrite:
            failures.unlink(missing_ok=True)
        dump_config(config, config.side_file("config.yaml"))
    with served_teacher(config.teacher, config.side_file) as endpoints:
        teacher = build_teacher(
            config.teacher,
            config.env,
            ledger=config.side_file("ledger.jsonl"),
            cache=config.side_file("cache.jsonl"),
            endpoints=endpoints,
        )
        client = teacher.client if isinstance(teacher, LLMTeacher) else None

        async def run() -> StageStats:
            try:
                return await run_items(
                    stage,
                    work(teacher),
                    config.output_path,
                    failures,
                    concurrency=config.teacher.concurrency,
                    dry_run=dry_run,
                    on_item=on_item,
                )
            finally:
                await teacher.aclose()

        stats = asyncio.run(run())
    if client is not None:
        stats.calls, stats.spent = client.stats, client.ledger.spent
    if stats.stopped:
        raise BudgetExceededError(
            f"{stage}: stopped before exceeding --max-cost ${config.teacher.max_cost:g}"
            f" (${stats.spent:.4f} spent): {stats.done} done, {stats.stopped} left;"
            " rerun with a higher --max-cost to finish (answered calls are cached)"
        )
    return stats


async def run_items(
    stage: str,
    items: Sequence[tuple[str, Work]],
    out: Path,
    failures_path: Path,
    *,
    concurrency: int,
    dry_run: bool = False,
    on_item: OnItem | None = None,
) -> StageStats:
    """Run ``items`` (item id, the teacher call making its record) not already in ``out``."""
    calls = dict(items)
    done = done_ids(out)
    failures = {
        failure.item_id: failure
        for failure in (read_records(failures_path, Failure) if failures_path.exists() else [])
        if failure.item_id not in done
    }
    pending = {key: call for key, call in calls.items() if key not in done}
    stats = StageStats(
        stage=stage,
        output=out,
        total=len(calls),
        skipped=len(calls) - len(pending),
        failures=failures_path,
        dry_run=dry_run,
    )
    slots = asyncio.Semaphore(concurrency)
    stop = asyncio.Event()

    def save_failures() -> None:
        if not dry_run:
            write_records(failures_path, sorted(failures.values(), key=lambda f: f.item_id))

    async def attempt(key: str, call: Work) -> None:
        """Run one item and record how it ended (in ``stats`` and the files)."""
        if stop.is_set():
            stats.stopped += 1
            return
        try:
            record = await call()
        except NotSent:
            stats.estimated += 1
        except BudgetExceededError:
            stop.set()
            stats.stopped += 1
        except FatalRunError:
            raise  # nothing can succeed: stop the stage with this one error
        except (AgentGymError, OSError) as exc:
            failures[key] = Failure(item_id=key, reason=str(exc), time=now())
            save_failures()
            stats.failed += 1
            log.warning("%s: %s", key, exc)
        else:
            if not dry_run:  # a dry run writes nothing, even answers found in the cache
                append_records(out, [record])
                if failures.pop(key, None) is not None:
                    save_failures()
            stats.done += 1

    async def one(key: str, call: Work) -> None:
        async with slots:
            await attempt(key, call)
        if on_item is not None:
            on_item(stats)

    await asyncio.gather(*(one(key, call) for key, call in pending.items()))
    return stats


def _episodes_of(path: Path, env: str) -> list[Episode]:
    episodes = read_records(path, Episode)
    for episode in episodes:
        if episode.env != env:
            raise UsageError(f"{path} holds {episode.item_id}, not a {env} episode: pass --env")
    return episodes


def _selected_indices(config: ExtractStateConfig) -> list[int]:
    spec = get_spec(config.env)
    if config.data is not None:
        return config.chosen(config.env, {}, spec.goal_index, spec.categories)
    if spec.load is None:
        raise UsageError(f"{config.env} has no simulator here to read tasks from: pass --demos")
    return config.chosen(config.env, spec.load().splits(), categorise=spec.categories)
