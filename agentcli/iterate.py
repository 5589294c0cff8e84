"""``agentgym iterate``: the LEAP loop as stages over a run directory (see ``agentcli.pipeline``).

Iteration 0, behavioural cloning (``[env]``: once per environment)::

    collect[env] → annotate[env] → extract-state[env] → build-data → train → eval[env]

Iteration k ≥ 1, the teacher corrects the student's own episodes::

    rollout[env] (model k-1, training items) → correct[env] → build-data → train (from
    model k-1) → eval[env]

and in iteration 1 with ``control: true`` the matched control, iteration 0 continued as
iteration 1 is but on the expert's own states::

    control-collect[env] (the expert on the items the student was rolled out on) →
    control-annotate[env] → control-build-data → control-train (from model 0) → control-eval[env]

Each environment's files live in its own part of the run (``RunLayout.env``); the training
set mixes all of them and one model learns from it. Each section of the config holds the
settings of the command that runs its stage (the same names, types, defaults and help) less
what iterate fills in (environment, paths, models); ``iterations`` overrides sections for
one iteration.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field, create_model, model_validator

from agentcli.config import (
    CommandConfig,
    config_as_data,
    dump_config,
    resolve_config,
    validate_config,
)
from agentcli.data.build import FILE_NAMES, BuildDataConfig
from agentcli.envs.registry import get_spec
from agentcli.errors import UsageError
from agentcli.pipeline import DONE, Manifest, Outcome, Stage, run_lock, run_stages
from agentcli.policy import PolicyConfig
from agentcli.rollout import RolloutConfig
from agentcli.run_layout import RunLayout
from agentcli.teacher import TeacherConfig
from agentcli.teacher.stages import AnnotateConfig, CorrectConfig, ExtractStateConfig
from agentcli.train.config import SUMMARY_NAME, TrainConfig

CONFIG_NAME = "iterate.yaml"  # the iteration's resolved config, in its folder


def _settings(
    model: type[BaseModel],
    name: str,
    *,
    filled: set[str],
    doc: str,
    defaults: Mapping[str, Any] | None = None,
) -> Any:
    """A config section: ``model``'s fields (types, defaults, help) less those iterate fills."""
    fields: dict[str, Any] = {}
    for field_name, info in model.model_fields.items():
        if field_name in filled:
            continue
        if defaults and field_name in defaults:
            info = copy.copy(info)
            info.default = defaults[field_name]
        fields[field_name] = (info.annotation, info)
    return create_model(name, __base__=CommandConfig, __doc__=doc, __module__=__name__, **fields)


_ROLLOUT_FILLED = {"env", "data", "env_server", "out", "policy"}

TeacherSettings = _settings(
    TeacherConfig,
    "TeacherSettings",
    filled=set(),
    defaults={"kind": "oracle"},  # a section naming no teacher means the built-in one
    doc="Who teaches: the env's oracle, or an LLM at an OpenAI-compatible endpoint (openai).",
)
PolicySettings = _settings(
    PolicyConfig,
    "PolicySettings",
    filled={"model"},
    doc="How the student acts: its iteration's model (local), or a server of it (openai).",
)
CollectSettings = _settings(
    RolloutConfig,
    "CollectSettings",
    filled=_ROLLOUT_FILLED,
    defaults={"split": "train"},
    doc="`agentgym collect`: the expert's demos.",
)


_RolloutFields = _settings(
    RolloutConfig, "_RolloutFields", filled=_ROLLOUT_FILLED, defaults={"split": "train"}, doc=""
)
_EvalFields = _settings(RolloutConfig, "_EvalFields", filled=_ROLLOUT_FILLED, doc="")


class RolloutSettings(_RolloutFields):
    """`agentgym rollout`: the previous iteration's model on training items."""

    policy: PolicySettings = Field(
        default_factory=lambda: PolicySettings(), description="The student's generation."
    )


class EvalSettings(_EvalFields):
    """`agentgym eval`: each iteration's model on held-out items."""

    policy: PolicySettings = Field(
        default_factory=lambda: PolicySettings(), description="The student's generation."
    )


CorrectSettings = _settings(
    CorrectConfig,
    "CorrectSettings",
    filled={"env", "out", "teacher", "rollout", "state"},
    doc="`agentgym correct`: which student episodes the teacher corrects.",
)
DataSettings = _settings(
    BuildDataConfig,
    "DataSettings",
    filled={"method", "iter", "run", "out", "control"},
    doc="`agentgym build-data`: how examples are rendered, mixed and split.",
)
TrainSettings = _settings(
    TrainConfig,
    "TrainSettings",
    filled={
        "method",
        "data",
        "model",
        "out",
        "env",
        "resume",
        "eval_every",
        "eval_steps",
        "eval_items",
        "env_server",
        "max_rounds",
        "eval_batch_size",
    },  # fmt: skip
    doc="`agentgym train`: hyper-parameters (unset ones take the method's recipe).",
)


class IterateConfig(CommandConfig):
    """``agentgym iterate``: one iteration of the LEAP loop over a run directory."""

    run: Path = Field(description="The run directory, e.g. runs/quickstart.")
    iter: int = Field(0, ge=0, description="The iteration (set by --iter / --iters).")
    envs: list[str] = Field(
        min_length=1, description="Environments: their data is mixed for training; eval per env."
    )
    model: Path = Field(description="The model iteration 0 trains from (an HF directory).")
    method: Literal["bc", "sft", "dpo"] = Field(
        "sft", description="Training method (dpo needs corrections: iteration 1 on)."
    )
    teacher: TeacherSettings = Field(
        default_factory=lambda: TeacherSettings(), description="Who annotates and corrects."
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
        description="Iteration 1 also trains model 0 on as many states of the expert's own"
        " episodes as it corrects of the student's, and evaluates it.",
    )
    env_servers: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Env name → server URLs; an env not named here gets a built-in server.",
    )
    collect: CollectSettings = Field(
        default_factory=lambda: CollectSettings(), description="Settings of collect."
    )
    rollout: RolloutSettings = Field(
        default_factory=RolloutSettings, description="Settings of rollout."
    )
    correct: CorrectSettings = Field(
        default_factory=lambda: CorrectSettings(), description="Settings of correct."
    )
    data: DataSettings = Field(
        default_factory=lambda: DataSettings(), description="Settings of build-data."
    )
    train: TrainSettings = Field(
        default_factory=lambda: TrainSettings(), description="Settings of train."
    )
    eval: EvalSettings = Field(default_factory=EvalSettings, description="Settings of eval.")
    iterations: dict[int, dict[str, Any]] = Field(
        default_factory=dict,
        description="Overrides for one iteration, merged over the sections above, e.g."
        " {1: {train: {epochs: 2}}}.",
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
            fixed = {"run", "iter", "iterations"} & overrides.keys()
            if fixed:
                raise ValueError(f"iterations.{key} cannot override {', '.join(sorted(fixed))}")
            data = _merged(data, overrides)
        return data

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
            raise ValueError("the control learns expert states, which have no rejected turn")
        return self

    @property
    def layout(self) -> RunLayout:
        return RunLayout(self.run)


def iteration_numbers(iteration: int | None, iterations: str | None) -> list[int]:
    """``--iter N`` → [N]; ``--iters A-B`` → [A, ..., B]."""
    if (iteration is None) == (iterations is None):
        raise UsageError("say which iterations to run: --iter N or --iters A-B (one of them)")
    if iteration is not None:
        if iteration < 0:
            raise UsageError(f"--iter {iteration}: iterations count from 0")
        return [iteration]
    first, dash, last = (iterations or "").partition("-")
    if not (first.isdigit() and (not dash or last.isdigit())) or int(last or first) < int(first):
        raise UsageError(f"--iters {iterations!r}: write a range like 0-3 (or one number)")
    return list(range(int(first), int(last or first) + 1))


def resolve_iterations(
    config_file: Path | None, iterations: list[int], overrides: list[str]
) -> list[IterateConfig]:
    """Each iteration's config, validated with every stage's config before anything runs."""
    if config_file is None:
        raise UsageError("iterate needs --config FILE (see configs/ for examples)")
    configs = [
        resolve_config(IterateConfig, config_file=config_file, cli={"iter": k}, overrides=overrides)
        for k in iterations
    ]
    for config in configs:
        iteration_stages(config, _silent)  # builds (and so validates) each stage's config
    return configs


def iteration_line(config: IterateConfig, outcomes: list[Outcome]) -> str:
    """One line on what an iteration did: stages run and skipped, then each eval's result."""
    ran = sum(outcome.action != "skip" for outcome in outcomes)
    results = [
        (f"control {o.summary}" if "/control-eval/" in o.key else o.summary)
        for o in outcomes
        if o.key.split("/")[1] in ("eval", "control-eval")
    ]
    return (
        f"iteration {config.iter}: {ran} stages run, {len(outcomes) - ran} skipped; "
        + "; ".join(results)
    )


class Progress(Protocol):
    """Told how far a stage got: items done of ``total`` (None: not known yet)."""

    def __call__(self, stage: str, done: int, total: int | None) -> None: ...


def run_iteration(
    config: IterateConfig,
    *,
    from_stage: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> list[Outcome]:
    """Run, resume or skip each stage of ``config.iter``, recording them in the manifest."""
    layout = config.layout
    with run_lock(layout.lock):
        manifest = Manifest(layout.manifest)
        k = config.iter
        if k > 0 and manifest.stages.get(f"iter{k - 1}/train", {}).get("status") != DONE:
            raise UsageError(
                f"iteration {k} starts from iteration {k - 1}'s model, which is not trained"
                f" yet: run --iter {k - 1} first"
            )
        stages = iteration_stages(config, progress or _silent)
        dump_config(config, layout.iteration(k) / CONFIG_NAME)
        record = manifest.iterations.setdefault(str(k), {})
        record["config"] = config_as_data(config)
        manifest.save()
        return run_stages(stages, manifest, from_stage=from_stage, force=force)


def iteration_stages(config: IterateConfig, progress: Progress) -> list[Stage]:
    """Every stage of ``config.iter``, in the order they run."""
    plan = _Plan(config, progress)
    k = config.iter
    if k == 0:
        stages = [plan.collect(env, control=False) for env in config.envs]
        if config.annotate:
            stages += [plan.annotate(env, control=False) for env in config.envs]
        if config.extract_state:
            stages += [plan.extract_state(env) for env in config.envs]
        start = config.model
    else:
        stages = [plan.rollout(env) for env in config.envs]
        stages += [plan.correct(env) for env in config.envs]
        start = config.layout.model(k - 1)
    stages.append(plan.build_data(control=False))
    stages.append(plan.train(start, control=False))
    stages += [plan.eval(env, control=False) for env in config.envs]
    if k == 1 and config.control:
        stages += [plan.collect(env, control=True) for env in config.envs]
        if config.annotate:
            stages += [plan.annotate(env, control=True) for env in config.envs]
        stages.append(plan.build_data(control=True))
        stages.append(plan.train(config.layout.model(0), control=True))
        stages += [plan.eval(env, control=True) for env in config.envs]
    return stages


class _Plan:
    """Builds each stage's config (validated now, before anything runs) and its work."""

    def __init__(self, config: IterateConfig, progress: Progress) -> None:
        self.config = config
        self.layout = config.layout
        self.progress = progress
        self.k = config.iter

    # --- per environment ---------------------------------------------------------------------

    def collect(self, env: str, *, control: bool) -> Stage:
        """The expert's demos; for the control, on the items the student is rolled out on."""
        where = self.layout.env(env)
        settings = self.config.collect
        if control:  # the expert plays as in collect, on the items the student is rolled out on
            items = {"split": self.config.rollout.split, "limit": self.config.rollout.limit}
            settings = settings.model_copy(update=items)
        rollout = self._rollout_config(
            env,
            settings,
            out=where.control_demos if control else where.demos,
            policy={"kind": "oracle"},
            section="collect",
        )
        return self._stage(
            "control-collect" if control else "collect",
            rollout,
            inputs=[],
            outputs=[rollout.episodes_path, rollout.config_path],
            run=lambda: self._roll_out(rollout, f"{env}: {{}} demos"),
            env=env,
        )

    def annotate(self, env: str, *, control: bool) -> Stage:
        from agentcli.teacher.stages import annotate

        where = self.layout.env(env)
        demos = where.control_demos if control else where.demos
        out = where.control_annotated_demos if control else where.annotated_demos
        config = self._teacher_config(AnnotateConfig, env, demos=demos, out=out)
        return self._stage(
            "control-annotate" if control else "annotate",
            config,
            inputs=[demos],
            outputs=[out, config.side_file("failures.jsonl")],  # ledger and cache stay
            run=lambda: self._teach(annotate, config),
            env=env,
            ledger=config.side_file("ledger.jsonl"),
        )

    def extract_state(self, env: str) -> Stage:
        from agentcli.teacher.stages import extract_state

        where = self.layout.env(env)
        by_llm = self.config.teacher.kind == "openai"
        source: dict[str, Any] = (
            {"demos": where.demos}
            if by_llm
            else {"split": self.config.rollout.split, "limit": self.config.rollout.limit}
        )
        config = self._teacher_config(ExtractStateConfig, env, out=where.privileged_state, **source)
        return self._stage(
            "extract-state",
            config,
            inputs=[where.demos] if by_llm else [],
            outputs=[where.privileged_state, config.side_file("failures.jsonl")],
            run=lambda: self._teach(extract_state, config),
            env=env,
            ledger=config.side_file("ledger.jsonl"),
        )

    def rollout(self, env: str) -> Stage:
        where = self.layout.env(env)
        model = self.layout.model(self.k - 1)
        rollout = self._rollout_config(
            env,
            self.config.rollout,
            out=where.rollout(self.k - 1).parent,
            policy=self._student(self.config.rollout.policy, model),
            section="rollout",
        )
        return self._stage(
            "rollout",
            rollout,
            inputs=[model],
            outputs=[rollout.out],
            run=lambda: self._roll_out(rollout, f"{env}: {{}} episodes of model {self.k - 1}"),
            env=env,
        )

    def correct(self, env: str) -> Stage:
        from agentcli.teacher.stages import correct

        where = self.layout.env(env)
        rollout = where.rollout(self.k - 1)
        config = self._teacher_config(
            CorrectConfig,
            env,
            rollout=rollout.parent,
            out=where.corrections(self.k - 1).parent,
            **self.config.correct.model_dump(),
        )
        return self._stage(
            "correct",
            config,
            inputs=[rollout, where.privileged_state],
            outputs=[config.output_path, config.side_file("failures.jsonl")],
            run=lambda: self._teach(correct, config),
            env=env,
            ledger=config.side_file("ledger.jsonl"),
        )

    def eval(self, env: str, *, control: bool) -> Stage:
        from agentcli.evaluate import evaluate

        where = self.layout.env(env)
        model = self.layout.control_model if control else self.layout.model(self.k)
        rollout = self._rollout_config(
            env,
            self.config.eval,
            out=where.control_eval if control else where.eval(self.k),
            policy=self._student(self.config.eval.policy, model),
            section="eval",
        )

        def run() -> str:
            rows = evaluate(rollout, self._on_episode(rollout))
            row = next(row for row in rows if row.env == env and row.category == "all")
            return (
                f"{env}: success {row.success_rate:.1%}, score {row.mean_score:.3g},"
                f" {row.mean_steps:.1f} steps over {row.episodes} items → {rollout.out}"
            )

        return self._stage(
            "control-eval" if control else "eval",
            rollout,
            inputs=[model],
            outputs=[rollout.out],
            run=run,
            env=env,
        )

    # --- shared by the environments ----------------------------------------------------------

    def build_data(self, *, control: bool) -> Stage:
        """Each environment's training set, mixed into one file."""
        from agentcli.data.build import training_set, write_training_set

        out = self.layout.control_data if control else self.layout.data(self.k)
        configs = {
            env: validate_config(
                BuildDataConfig,
                {
                    **self.config.data.model_dump(),
                    "method": self.config.method,
                    "iter": self.k,
                    "run": self.layout.env(env).root,
                    "control": control,
                    "out": out,
                },
                source="the data section",
            )
            for env in self.config.envs
        }
        first = next(iter(configs.values()))

        def run() -> str:
            built = {env: training_set(config) for env, config in configs.items()}
            for split in ("train", "test"):
                records = [record for one in built.values() for record in getattr(one, split)]
                path = first.train_path if split == "train" else first.test_path
                write_training_set(self.config.method, records, path)
            parts = [
                f"{env} {one.summary.train} + {one.summary.test} ("
                + ", ".join(f"{name} {count}" for name, count in one.summary.sources.items())
                + ")"
                for env, one in built.items()
            ]
            return f"train + test records: {'; '.join(parts)} → {first.train_path}"

        inputs = []
        for env in self.config.envs:
            where = self.layout.env(env)
            inputs += [where.demos, where.annotated_demos]
            for j in range(self.k):
                inputs += [where.rollout(j), where.corrections(j)]
            if control:
                inputs += [where.control_demos, where.control_annotated_demos]
        return Stage(
            name="control-build-data" if control else "build-data",
            iteration=self.k,
            config={env: config_as_data(config) for env, config in configs.items()},
            inputs=inputs,
            outputs=[out],
            run=run,
        )

    def train(self, start: Path, *, control: bool) -> Stage:
        from agentcli.train.launch import train

        data = self.layout.control_data if control else self.layout.data(self.k)
        config = validate_config(
            TrainConfig,
            {
                **self.config.train.model_dump(),
                "method": self.config.method,
                "data": data / FILE_NAMES[self.config.method],
                "model": start,
                "out": self.layout.control_model if control else self.layout.model(self.k),
                "resume": True,  # an interrupted train continues from its last checkpoint
            },
            source="the train section",
        )

        def run() -> str:
            return train(config).line() + f" → {config.out}"

        return self._stage(
            "control-train" if control else "train",
            config,
            inputs=[config.data, start],
            outputs=[config.out],
            run=run,
        )

    # --- helpers -----------------------------------------------------------------------------

    def _stage(
        self,
        name: str,
        config: BaseModel,
        *,
        inputs: list[Path],
        outputs: list[Path],
        run: Callable[[], str],
        env: str | None = None,
        ledger: Path | None = None,
    ) -> Stage:
        return Stage(
            name=name,
            iteration=self.k,
            config=config_as_data(config),
            inputs=inputs,
            outputs=outputs,
            run=run,
            env=env,
            ledger=ledger,
        )

    def _rollout_config(
        self, env: str, settings: BaseModel, *, out: Path, policy: dict[str, Any], section: str
    ) -> RolloutConfig:
        fields = settings.model_dump(exclude={"policy"})
        return validate_config(
            RolloutConfig,
            {
                **fields,
                "env": env,
                "env_server": self.config.env_servers.get(env, []),
                "out": out,
                "policy": policy,
            },
            source=f"the {section} section",
        )

    def _student(self, settings: BaseModel, model: Path) -> dict[str, Any]:
        policy = settings.model_dump()
        if policy["kind"] == "local":
            policy["model"] = model
        return policy

    def _teacher_config(self, model: type[BaseModel], env: str, **fields: Any) -> Any:
        return validate_config(
            model,
            {"env": env, "teacher": self.config.teacher.model_dump(), **fields},
            source="the teacher section",
        )

    def _roll_out(self, config: RolloutConfig, line: str) -> str:
        from agentcli.rollout import execute

        stats = execute(config, self._on_episode(config))
        return line.format(stats.total) + (
            f", success {stats.success_rate:.1%} ({stats.errors} errors) → {config.episodes_path}"
        )

    def _on_episode(self, config: RolloutConfig) -> Callable[[Any, Any], None]:
        name = f"{config.env} {config.episodes_path.parent.name}"

        def on_episode(episode: Any, stats: Any) -> None:
            self.progress(name, stats.finished, stats.total - stats.skipped)

        return on_episode

    def _teach(self, stage: Callable[..., Any], config: Any) -> str:
        def on_item(stats: Any) -> None:
            self.progress(f"{config.env} {stats.stage}", stats.done + stats.failed, stats.total)

        stats = stage(config, on_item)
        failed = f", {stats.failed} failed (see {stats.failures})" if stats.failed else ""
        spent = f", ${stats.spent:.4f} spent" if stats.calls is not None else ""
        return f"{config.env}: {stats.done + stats.skipped} done{failed}{spent} → {stats.output}"


def train_summary_path(layout: RunLayout, iteration: int | None) -> Path:
    """Where iteration ``iteration``'s (None: the control's) training wrote its summary."""
    model = layout.control_model if iteration is None else layout.model(iteration)
    return model / SUMMARY_NAME


def _merged(base: Mapping[str, Any], layer: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in layer.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged


def _silent(stage: str, done: int, total: int | None) -> None:
    return None
