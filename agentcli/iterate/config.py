"""``iterate``'s config: one section per stage, of the settings type the stage's command is
composed of (the same names, types, defaults and help), without what ``iterate`` fills in
itself (environment, paths, models, the student's view, the seed); ``iterations`` overrides
sections for one iteration."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from agentcli.config import CommandConfig, validate_config
from agentcli.conversation import StudentView
from agentcli.data.build import DataSettings
from agentcli.envs.registry import get_spec
from agentcli.errors import UsageError
from agentcli.items import HeldOutItems, ItemSelection
from agentcli.models import TinyModelSettings
from agentcli.policy import PolicySettings
from agentcli.rollout import EpisodeSettings
from agentcli.run_layout import CONTROL, RunLayout, seed_run
from agentcli.teacher import TeacherConfig
from agentcli.teacher.stages import EpisodeSelection
from agentcli.train.config import GrpoSettings, TrainSettings


class CollectSettings(ItemSelection, EpisodeSettings):
    """`agentgym collect`: the expert's demos."""


class RolloutSettings(ItemSelection, EpisodeSettings):
    """`agentgym rollout`: the previous iteration's model on training items."""

    policy: PolicySettings = Field(
        default_factory=PolicySettings, description="The student's generation."
    )


class EvalSettings(HeldOutItems, RolloutSettings):
    """`agentgym eval`: each iteration's model on held-out items."""


class BuiltStudent(CommandConfig):
    """A student the run builds itself, initialised with the run's seed."""

    tiny: TinyModelSettings = Field(description="A tiny random Llama (agentgym model tiny).")


# Where a section holds a seed of its own: iterate sets each from the run's ``seed``.
SECTION_SEEDS = ("train.hyperparameters", "data", "rollout.policy", "eval.policy")
# What a variant may set: how it learns. Not what it learns from (the iteration's rollout and
# corrections) nor how it is evaluated (the iteration's items, so that the two pair).
VARIANT_SECTIONS = ("method", "train_from", "data", "train", "grpo")
VERSUS = "versus"  # a variant's other variants of its iteration that the report pairs it with
VARIANT_NAME = re.compile(r"[a-z][a-z0-9_]*(-[a-z0-9_]+)*")


class IterateConfig(CommandConfig):
    """``agentgym iterate``: one iteration of the LEAP loop, for one seed, over a run directory."""

    run: Path = Field(
        description="The run directory, e.g. runs/quickstart; seed N's run is its seed<N> folder."
    )
    iter: int = Field(0, ge=0, description="The iteration (set by --iter / --iters).")
    seed: int = Field(
        0,
        ge=0,
        description="Seeds everything random in the run: the student's initialisation (a"
        " model the run builds), the data order, the control's states, sampling (set by --seed"
        " / --seeds).",
    )
    envs: list[str] = Field(
        min_length=1, description="Environments: their data is mixed for training; eval per env."
    )
    model: Path | BuiltStudent = Field(
        description="The model iteration 0 trains from: an HF directory, or one the run builds"
        " with its seed ({tiny: {hidden: 128, layers: 4}})."
    )
    method: Literal["bc", "sft", "dpo", "grpo"] = Field(
        "sft",
        description="Training method (dpo needs corrections: iteration 1 on; grpo plays the"
        " envs from the previous iteration's model instead of rollout, correct and"
        " build-data).",
    )
    train_from: Literal["previous", "start"] = Field(
        "previous",
        description="What iterations from 1 on train from. previous: the last iteration's"
        " model, continued on the iteration's data (a control: the last iteration's control,"
        " model 0 for iteration 1's); start: the model iteration 0 started from, trained"
        " afresh on the same data (DAgger's way; the controls likewise).",
    )
    view: StudentView = Field(
        default_factory=StudentView,
        description="How the student is shown its episodes, in its rollouts, evals and"
        " training data alike.",
    )
    teacher: TeacherConfig = Field(
        default_factory=TeacherConfig, description="Who annotates and corrects."
    )
    annotate: bool = Field(
        True, description="The teacher writes the reason behind each demo action (iteration 0)."
    )
    extract_state: bool = Field(
        False,
        description="The teacher writes each task's privileged state (iteration 0); an LLM"
        " teacher reads it from the demos, so roll out only items the demos cover.",
    )
    control: bool = Field(
        False,
        description="Each iteration from 1 on also trains its matched control: the last"
        " iteration's control (model 0 for iteration 1) on as many states of the expert's own"
        " episodes as the iteration has corrected states of the students', and evaluates it.",
    )
    env_servers: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Env name → server URLs; an env not named here gets a built-in server.",
    )
    collect: CollectSettings = Field(
        default_factory=CollectSettings, description="Settings of collect."
    )
    rollout: RolloutSettings = Field(
        default_factory=RolloutSettings, description="Settings of rollout."
    )
    correct: EpisodeSelection = Field(
        default_factory=EpisodeSelection, description="Settings of correct."
    )
    data: DataSettings = Field(default_factory=DataSettings, description="Settings of build-data.")
    train: TrainSettings = Field(default_factory=TrainSettings, description="Settings of train.")
    grpo: GrpoSettings = Field(
        default_factory=GrpoSettings, description="Settings of train when the method is grpo."
    )
    eval: EvalSettings = Field(default_factory=EvalSettings, description="Settings of eval.")
    variants: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Alternatives to an iteration's model, each trained from where the"
        " iteration starts but by other settings of method, train_from, data, train or grpo,"
        " on the iteration's corrections, and evaluated on the same items: name → settings,"
        " e.g. under iterations: {1: {variants: {dpo: {method: dpo}}}}. The report pairs each"
        " with the iteration's model, and with the variants its versus lists.",
    )
    iterations: dict[int, dict[str, Any]] = Field(
        default_factory=dict,
        description="Overrides for one iteration, merged over the sections above, e.g."
        " {1: {train: {hyperparameters: {num_train_epochs: 2}}}}.",
    )

    @model_validator(mode="before")
    @classmethod
    def _iteration_overrides(cls, data: Any) -> Any:
        """Merge ``iterations[iter]`` over the rest, so the config is the iteration's own."""
        if not isinstance(data, dict) or not isinstance(data.get("iterations"), dict):
            return data
        iteration = str(data.get("iter", 0))
        for key, overrides in data["iterations"].items():
            if str(key) != iteration or not overrides:
                continue
            if not isinstance(overrides, dict):
                raise ValueError(f"iterations.{key} must be a mapping of sections to settings")
            fixed = {"run", "iter", "seed", "iterations"} & overrides.keys()
            if fixed:
                raise ValueError(f"iterations.{key} cannot override {', '.join(sorted(fixed))}")
            data = _merged(data, overrides)
        return data

    @model_validator(mode="after")
    def _one_seed(self) -> IterateConfig:
        for path in SECTION_SEEDS:
            section: Any = self
            for name in path.split("."):
                section = getattr(section, name)
            if "seed" in section.model_fields_set:
                raise ValueError(
                    f"{path}.seed: every stage of a run is seeded by the run's seed (--seed N,"
                    f" --seeds A-B): remove {path}.seed"
                )
        return self

    @model_validator(mode="after")
    def _consistent(self) -> IterateConfig:
        for env in self.envs:
            get_spec(env)  # an unknown name is one line with the closest known one
        strays = set(self.env_servers) - set(self.envs)
        if strays:
            raise ValueError(f"env_servers names {', '.join(sorted(strays))}, not in envs")
        if self.method == "dpo" and self.iter == 0:
            raise ValueError(
                "dpo learns from corrections, which iteration 0 has none of: train it with bc"
                " or sft and switch from iteration 1 on (iterations: {1: {method: dpo}})"
            )
        if self.teacher.dry_run:
            raise ValueError(
                "teacher.dry_run writes nothing for later stages to use: estimate a stage's"
                " cost with its own command (agentgym correct --dry-run …)"
            )
        if self.control and self.method == "dpo":
            raise ValueError(
                "the control learns expert states, which have no rejected turn: set control:"
                f" false for a dpo iteration (iterations: {{{self.iter}: {{control: false}}}})"
            )
        if self.method == "grpo" and self.iter == 0:
            raise ValueError(
                "grpo improves a student that already acts: train iteration 0 with bc or sft"
                " and switch from iteration 1 on (iterations: {1: {method: grpo}})"
            )
        if self.method == "grpo" and self.train_from == "start":
            raise ValueError(
                "grpo improves the last iteration's student by playing it: set train_from:"
                " previous for a grpo iteration"
            )
        if self.method == "grpo" and self.control:
            raise ValueError(
                f"the control matches iteration {self.iter}'s corrections, which grpo makes"
                f" none of: set control: false for it (iterations: {{{self.iter}: {{control:"
                " false}}}), or make it a LEAP iteration"
            )
        return self

    @model_validator(mode="after")
    def _variants_named_and_scoped(self) -> IterateConfig:
        for name, settings in self.variants.items():
            if not VARIANT_NAME.fullmatch(name) or name.startswith(CONTROL):
                raise ValueError(
                    f"variants.{name}: name a variant in lower case letters, digits, _ and -,"
                    f" not starting with {CONTROL} (the matched controls' name), e.g. dpo or"
                    " rl-from-0"
                )
            if not isinstance(settings, dict):
                raise ValueError(f"variants.{name} must be a mapping of sections to settings")
            others = sorted(settings.keys() - {*VARIANT_SECTIONS, VERSUS})
            if others:
                raise ValueError(
                    f"variants.{name} sets {', '.join(others)}: a variant learns from its"
                    " iteration's rollout and corrections and is evaluated on its items, so it"
                    f" may set only {', '.join(VARIANT_SECTIONS)} (and {VERSUS})"
                )
            versus = settings.get(VERSUS, [])
            if (
                not isinstance(versus, list)
                or any(other not in self.variants or other == name for other in versus)
                or len(set(versus)) < len(versus)  # a pair twice would count twice across seeds
            ):
                raise ValueError(
                    f"variants.{name}.{VERSUS} must list other variants of its iteration, each"
                    f" once ({', '.join(sorted(self.variants.keys() - {name})) or 'it has none'})"
                )
        return self

    def variant(self, name: str) -> IterateConfig:
        """Variant ``name``'s config: this iteration's, its sections merged with the variant's
        settings (one-line ``ConfigError`` if they do not make a valid iteration)."""
        base = self.model_dump(exclude_unset=True, exclude={"iterations", "variants"})
        settings = {k: v for k, v in self.variants[name].items() if k != VERSUS}
        data = _merged({**base, "iter": self.iter, "control": False}, settings)
        return validate_config(IterateConfig, data, source=f"variants.{name}")

    @property
    def layout(self) -> RunLayout:
        """This seed's run."""
        return RunLayout(seed_run(self.run, self.seed))

    @property
    def start_model(self) -> Path:
        """The model iteration 0 trains from: the one given, or the one the run builds."""
        return self.model if isinstance(self.model, Path) else self.layout.student


def iteration_numbers(iteration: int | None, iterations: str | None) -> list[int]:
    """``--iter N`` → [N]; ``--iters A-B`` → [A, ..., B]."""
    if (iteration is None) == (iterations is None):
        raise UsageError("say which iterations to run: --iter N or --iters A-B (one of them)")
    if iteration is not None:
        if iteration < 0:
            raise UsageError(f"--iter {iteration}: iterations count from 0")
        return [iteration]
    return number_range(iterations or "", "--iters")


def seed_numbers(seed: int | None, seeds: str | None) -> list[int] | None:
    """``--seed N`` → [N]; ``--seeds A-B`` → [A, ..., B]; neither: None (the config's seed)."""
    if seed is not None and seeds is not None:
        raise UsageError("--seed and --seeds both say which seeds to run: give one of them")
    if seed is not None:
        if seed < 0:
            raise UsageError(f"--seed {seed}: seeds count from 0")
        return [seed]
    return None if seeds is None else number_range(seeds, "--seeds")


def number_range(text: str, flag: str) -> list[int]:
    """``A-B`` → [A, ..., B]; ``N`` → [N]."""
    first, dash, last = text.partition("-")
    if not (first.isdigit() and (not dash or last.isdigit())) or int(last or first) < int(first):
        raise UsageError(f"{flag} {text!r}: write a range like 0-3 (or one number)")
    return list(range(int(first), int(last or first) + 1))


def _merged(base: Mapping[str, Any], layer: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in layer.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged
