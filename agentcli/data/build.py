"""Training sets of one iteration of a run: behavioural cloning on demos, then the teacher's
corrections of the student's own episodes (``agentgym build-data``).

Iteration 0 trains on the demos (annotated ones when ``annotate`` ran). Iteration k ≥ 1 adds,
for every corrected step t of iterations 0..k-1's rollouts, one example whose input is what
the student had seen up to t (its own earlier turns included) and whose target is the
teacher's reason and action; dpo pairs that target (chosen) with the student's own turn
(rejected). Examples render as AgentGym conversations (``multi-turn``: loss on the target turn
only) or as one prompt per step (``single-prompt``, LEAP's way: the history in one user
message). Items are split into train and test by a hash of their id, so an item stays on its
side however many items later iterations add.

``control`` builds iteration k's matched control instead: the demos plus as many states of the
expert's own episodes on the items the students were rolled out on (``control/demos.jsonl``,
and ``control<j>/demos.jsonl`` for each later iteration j ≤ k) as iteration k has corrected
states of the students', each learned the way a correction is. So the control trains as much,
on as many extra states, and differs only in whose states they are.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, Field, model_validator

from agentcli.common import write_atomic
from agentcli.config import CommandConfig, dump_config
from agentcli.conversation import (
    StudentView,
    check_style,
    episode_conversation,
    episode_opening,
    shown_at,
    turn_text,
)
from agentcli.data.agentgym import agentgym_training_text
from agentcli.data.jsonl import numbered_records, read_records, write_records
from agentcli.errors import UsageError
from agentcli.records import (
    ChatMessage,
    ChatRecord,
    Correction,
    CorrectionStep,
    Episode,
    PreferenceRecord,
    parse_item_id,
)
from agentcli.resume import guard_output
from agentcli.run_layout import RunLayout, control_label
from agentcli.trained_view import data_view_path, write_view

log = logging.getLogger("agentgym.data")

Method = Literal["bc", "sft", "dpo"]
Mix = Literal["balanced", "all", "none"]
TrainingRecord = ChatRecord | PreferenceRecord
RecordT = TypeVar("RecordT", Episode, Correction)

FILE_NAMES: dict[str, str] = {"bc": "bc.json", "sft": "sft.jsonl", "dpo": "dpo.jsonl"}


class DataSettings(CommandConfig):
    """How examples are chosen, mixed and split (``iterate``'s ``data`` section)."""

    mix: Mix = Field(
        "balanced",
        description="Corrections of earlier iterations: balanced (as many from each), all, "
        "or none (the latest only).",
    )
    keep_uncorrected: bool = Field(
        False, description="Also train on steps where the student already did the expert's action."
    )
    steps_per_episode: int | None = Field(
        None,
        ge=1,
        description="Learn at most the first N steps of each corrected episode: a failed episode"
        " runs to the round limit, and its late steps, taken once lost, would flood the data.",
    )
    first_step_repeats: int | None = Field(
        None,
        ge=2,
        description="Learn each demo's first step N times (default once; a view with a history"
        " window): the step that reads the task, which a small student learns last (webshop's"
        " search, copying the goal's words).",
    )
    holdout: float = Field(0.05, ge=0, lt=1, description="Share of items held out as test.")
    seed: int = Field(0, description="Seeds the train/test split and the balanced sampling.")


class BuildDataConfig(DataSettings):
    """``agentgym build-data``: one method's training set for one iteration of a run."""

    method: Method = Field(
        description="Which training set to build. bc: AgentGym JSON; sft: chat JSONL; dpo:"
        " preference pairs."
    )
    iter: int = Field(
        ge=0, description="0: demos only; k: demos + corrections of iterations 0..k-1."
    )
    run: Path = Field(description="The run directory (demos.jsonl, iter*/...).")
    view: StudentView = Field(
        default_factory=StudentView,
        description="How the student is shown its episodes: as its rollouts and evals show them.",
    )
    control: bool = Field(
        False,
        description="Iteration k's matched control: the corrected states swapped for as many"
        " states of the expert's own episodes on the same items (control/demos.jsonl, and"
        " control<j>/demos.jsonl of each later iteration j ≤ k).",
    )
    out: Path | None = Field(
        None,
        description="Output directory (default: <run>/iter<k>/data; the control's:"
        " <run>/control/data for iteration 1, <run>/control<k>/data after).",
    )
    overwrite: bool = Field(
        False, description="Replace a training set built with other settings (else refused)."
    )

    @model_validator(mode="after")
    def _repeats_need_steps(self) -> BuildDataConfig:
        if self.first_step_repeats and self.view.whole_conversation:
            raise ValueError(
                "first_step_repeats repeats a demo's first step as an example of its own, and a"
                " view of the whole conversation learns each demo as one: give the view a"
                " history window (view.history_steps: N) or leave first_step_repeats out"
            )
        return self

    @model_validator(mode="after")
    def _control_matches_corrections(self) -> BuildDataConfig:
        if self.control and (self.iter == 0 or self.method == "dpo"):
            raise ValueError(
                "the control matches an iteration's corrections: build it with --iter 1 or later"
                " and method bc or sft (the expert's own states have no rejected turn)"
            )
        return self

    @property
    def out_dir(self) -> Path:
        layout = RunLayout(self.run)
        return self.out or (
            layout.control_data(self.iter) if self.control else layout.data(self.iter)
        )

    @property
    def train_path(self) -> Path:
        return self.out_dir / FILE_NAMES[self.method]

    @property
    def test_path(self) -> Path:
        name = Path(FILE_NAMES[self.method])
        return self.out_dir / f"{name.stem}.test{name.suffix}"

    @property
    def config_path(self) -> Path:
        return self.out_dir / f"{self.method}.config.yaml"


@dataclass
class BuildSummary:
    """What went into the files: records per source (``demos``, ``iter0``, ...) and split."""

    train_path: Path
    test_path: Path
    sources: dict[str, int] = field(default_factory=dict)  # after mixing, train and test
    train: int = 0
    test: int = 0
    dropped_equal: int = 0  # dpo pairs whose chosen and rejected texts were the same

    def line(self) -> str:
        parts = ", ".join(f"{name} {count}" for name, count in self.sources.items())
        equal = ""
        if self.dropped_equal:
            equal = f"; {self.dropped_equal} pairs dropped as chosen = rejected"
        return f"{self.train} train + {self.test} test records ({parts}){equal} → {self.train_path}"


@dataclass
class TrainingSet:
    """An iteration's records, rendered and split, before they are written."""

    train: list[TrainingRecord]
    test: list[TrainingRecord]
    summary: BuildSummary


Turn = tuple[str, str]  # (reason, action)


@dataclass(frozen=True)
class _Example:
    """One training target: the episode up to step ``t`` and the turn to learn there."""

    episode: Episode
    t: int | None  # None: a demo, learned whole
    target: Turn = ("", "")
    rejected: Turn = ("", "")  # the student's own turn (dpo's rejected)


def build_data(config: BuildDataConfig) -> BuildSummary:
    """Write the train and test files of ``config.method`` for ``config.iter``, once its
    inputs are read and checked; a set built with other settings is replaced only with
    ``overwrite`` (the same settings build it again, from the inputs as they are now)."""
    built = training_set(config)
    settings = config.model_dump(mode="json", exclude={"out", "overwrite"})
    guard_output(config.train_path, settings, overwrite=config.overwrite)
    write_training_set(config.method, built.train, config.train_path, config.view)
    write_training_set(config.method, built.test, config.test_path, config.view)
    dump_config(config, config.config_path)
    return built.summary


def training_set(config: BuildDataConfig) -> TrainingSet:
    """The records ``build_data`` writes (``iterate`` mixes several envs' into one file)."""
    layout = RunLayout(config.run)
    if config.method == "dpo" and config.iter == 0:
        raise UsageError("dpo pairs come from corrections: build dpo data for --iter 1 or later")
    sources: dict[str, list[_Example]] = {}
    if config.method != "dpo":  # demos have no rejected turn to pair with
        sources["demos"] = _demo_examples(layout)
    earlier = range(config.iter)
    if config.mix == "none":
        earlier = earlier[-1:]
    corrections = {
        f"iter{k}": _correction_examples(
            layout, k, keep=config.keep_uncorrected, per_episode=config.steps_per_episode
        )
        for k in earlier
    }
    if config.mix == "balanced":
        corrections = _balanced(corrections, config.seed)
    if config.control:
        corrected = sum(len(examples) for examples in corrections.values())
        corrections = {"control": _expert_examples(layout, config.iter, corrected, config.seed)}
    sources |= corrections
    check_style(
        [example.episode for examples in sources.values() for example in examples], config.view
    )

    render = _renderer(config)
    summary = BuildSummary(config.train_path, config.test_path)
    train: list[TrainingRecord] = []
    test: list[TrainingRecord] = []
    for name, examples in sources.items():
        records = [record for example in examples for record in render(example)]
        kept = [record for record in records if not _same_pair(record)]
        summary.dropped_equal += len(records) - len(kept)
        summary.sources[name] = len(kept)
        for record in kept:
            held_out = is_held_out(record.item_id, config.holdout, config.seed)
            (test if held_out else train).append(record)
    summary.train, summary.test = len(train), len(test)
    return TrainingSet(train, test, summary)


def is_held_out(item_id: str, fraction: float, seed: int) -> bool:
    """Whether an item belongs to the test split: a hash of the id, not a shuffle of today's
    list, so adding items never moves one across."""
    digest = hashlib.sha256(f"{seed}:{item_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def _demo_examples(layout: RunLayout) -> list[_Example]:
    path = layout.annotated_demos if layout.annotated_demos.exists() else layout.demos
    if not path.exists():
        raise UsageError(f"{layout.demos} does not exist: collect demos first (agentgym collect)")
    demos = _successful_demos(path)
    if not demos:
        raise UsageError(f"{path} holds no successful episode to clone: collect demos again")
    return [_Example(demo, None) for demo in demos]


def _successful_demos(path: Path) -> list[Episode]:
    """The successful episodes of ``path`` in item order, one per item (the last, as a rerun
    appends; with a warning, since two demos of one item are not what collect writes); a
    successful one with no step, which teaches nothing, is refused by its line."""
    latest: dict[str, tuple[int, Episode]] = {}
    for line, episode in numbered_records(path, Episode):
        if not episode.success:
            continue
        if not episode.steps:
            raise UsageError(
                f"{path} line {line}: {episode.item_id} succeeded in no step, so it has nothing"
                " to learn: delete that line or collect the item again"
            )
        if episode.item_id in latest:
            log.warning(
                "%s: %s has successful demos on lines %d and %d; the later one is used",
                path, episode.item_id, latest[episode.item_id][0], line,
            )  # fmt: skip
        latest[episode.item_id] = (line, episode)
    return _in_item_order([episode for _, episode in latest.values()])


def _expert_examples(layout: RunLayout, k: int, count: int, seed: int) -> list[_Example]:
    """``count`` states of the expert's successful episodes on the items the students of
    iterations 0..k-1 were rolled out on (the demos of the controls of iterations 1..k, the
    annotated ones where annotate ran; an item's episode once), sampled with a seed; when they
    hold fewer states, each is used once before any is used again."""
    episodes: dict[str, Episode] = {}
    for j in range(1, k + 1):
        annotated = layout.control_annotated_demos(j)
        path = annotated if annotated.exists() else layout.control_demos(j)
        if not path.exists():
            raise UsageError(
                f"{path} does not exist: collect the expert's episodes on the items model"
                f" {j - 1} was rolled out on into it (iterate's control-collect stage of"
                f" iteration {j} does)"
            )
        for episode in _in_item_order(read_records(path, Episode)):
            episodes.setdefault(episode.item_id, episode)
    states = [
        _Example(episode, t, (step.reason, step.action))
        for episode in episodes.values()
        if episode.success
        for t, step in enumerate(episode.steps)
    ]
    if not states and count:
        held = f"{path} holds" if k == 1 else f"{path} and the earlier controls' demos hold"
        raise UsageError(f"{held} no successful episode: collect the control again")
    if count > len(states):
        log.warning(
            "control: the expert's episodes hold %d states for %d corrected ones, so states"
            " repeat; roll the student out on more items for a closer match",
            len(states),
            count,
        )
    rng = random.Random(f"{seed}:{control_label(k)}")
    chosen: list[_Example] = []
    while len(chosen) < count:
        chosen += rng.sample(states, min(len(states), count - len(chosen)))
    return chosen


def _correction_examples(
    layout: RunLayout, k: int, *, keep: bool, per_episode: int | None
) -> list[_Example]:
    corrections_path, rollout_path = layout.corrections(k), layout.rollout(k)
    for path, stage in ((rollout_path, "rollout"), (corrections_path, "correct")):
        if not path.exists():
            raise UsageError(f"{path} does not exist: run iteration {k}'s {stage} stage first")
    episodes = {episode.item_id: episode for episode in read_records(rollout_path, Episode)}
    examples = []
    for correction in _in_item_order(read_records(corrections_path, Correction)):
        episode = episodes.get(correction.item_id)
        if episode is None:
            raise UsageError(
                f"{corrections_path} corrects {correction.item_id}, which {rollout_path} does "
                "not hold: correct that rollout again"
            )
        for step in correction.steps:
            _check_matches(step, episode, corrections_path)
        learned = [step for step in correction.steps if step.is_corrected or keep]
        for step in learned[:per_episode]:
            target = (step.corrected_reason, step.corrected_action)
            rejected = (step.original_reason, step.original_action)
            examples.append(_Example(episode, step.t, target, rejected))
    return examples


def _in_item_order(records: list[RecordT]) -> list[RecordT]:
    """Records by item: a rollout writes episodes as they finish, in an order that varies
    from run to run, and the training set (so the trained model) must not."""
    return sorted(records, key=lambda record: parse_item_id(record.item_id))


def _check_matches(step: CorrectionStep, episode: Episode, path: Path) -> None:
    if step.t >= episode.n_steps or episode.steps[step.t].observation != step.observation:
        raise UsageError(
            f"{path}: {episode.item_id} step {step.t} is not the rollout's step {step.t} "
            "(another rollout was corrected): correct this rollout again"
        )


def _balanced(sources: dict[str, list[_Example]], seed: int) -> dict[str, list[_Example]]:
    """The same number of examples from each source: the smallest's, sampled with a seed."""
    if not sources:
        return sources
    size = min(len(examples) for examples in sources.values())
    return {
        name: random.Random(f"{seed}:{name}").sample(examples, size) if size else []
        for name, examples in sources.items()
    }


def _renderer(config: BuildDataConfig) -> Callable[[_Example], list[TrainingRecord]]:
    """Each example as what the student is shown at its step (``shown_at``, as its
    rollouts show it) followed by the turn to learn there; demos of a multi-turn view without
    a history window are learned whole, one record per episode."""
    view = config.view
    dpo = config.method == "dpo"

    def at_step(example: _Example) -> TrainingRecord:
        episode, t = example.episode, example.t
        assert t is not None
        opening = episode_opening(episode, view)
        shown = shown_at(episode, t, view)
        single = view.format == "single-prompt"

        def text(turn: Turn) -> str:
            return turn_text(*turn, view, opening.style)

        if dpo:
            return PreferenceRecord(
                item_id=episode.item_id,
                prompt=shown[0].content if single else shown,
                chosen=text(example.target) if single else [_learned(text(example.target))],
                rejected=text(example.rejected) if single else [_learned(text(example.rejected))],
            )
        return ChatRecord(
            item_id=episode.item_id, messages=[*shown, _learned(text(example.target))]
        )

    whole_demos = view.whole_conversation
    first_repeats = config.first_step_repeats or 1

    def render(example: _Example) -> list[TrainingRecord]:
        if example.t is not None:
            return [at_step(example)]
        if whole_demos:
            messages = episode_conversation(example.episode, view)
            return [ChatRecord(item_id=example.episode.item_id, messages=messages)]
        # a demo, learned one step at a time, its first as often as asked
        return [
            at_step(_Example(example.episode, t, (step.reason, step.action)))
            for t, step in enumerate(example.episode.steps)
            for _ in range(first_repeats if t == 0 else 1)
        ]

    return render


def _learned(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=text, loss=True)


def _same_pair(record: TrainingRecord) -> bool:
    return isinstance(record, PreferenceRecord) and _text(record.chosen) == _text(record.rejected)


def _text(part: str | list[ChatMessage]) -> str:
    return part if isinstance(part, str) else "\n".join(m.content for m in part)


def write_training_set(
    method: Method, records: Sequence[BaseModel], path: Path, view: StudentView
) -> None:
    """Write ``records`` as ``method``'s file: AgentGym JSON for bc, JSONL otherwise; and
    beside it the ``view`` they were rendered with, which the models trained on them keep."""
    if method == "bc":
        write_atomic(path, agentgym_training_text(records))
    else:
        write_records(path, records)
    write_view(data_view_path(path), view)
