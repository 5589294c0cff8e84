"""The stages of one iteration, each with its config built (and validated) up front and its
work as a closure over the core function of its command. See ``agentcli.iterate``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from agentcli.config import config_as_data, validate_config
from agentcli.data.build import FILE_NAMES, BuildDataConfig
from agentcli.errors import UsageError
from agentcli.items import ItemSelection
from agentcli.iterate.config import BuiltStudent, IterateConfig
from agentcli.iterate.runner import Stage
from agentcli.policy.engine_server import ENGINES
from agentcli.rollout import RolloutConfig
from agentcli.run_layout import CONTROL, control_stage
from agentcli.teacher.stages import AnnotateConfig, CorrectConfig, ExtractStateConfig
from agentcli.train.config import TrainConfig


class Progress(Protocol):
    """Told how far a stage got: items done of ``total`` (None: not known yet)."""

    def __call__(self, stage: str, done: int, total: int | None) -> None: ...


def iteration_stages(config: IterateConfig, progress: Progress) -> list[Stage]:
    """Every stage of ``config.iter``, in the order they run: what the iteration learns from,
    its model, its matched control's, then each variant's."""
    plan = _Plan(config, progress)
    k = config.iter
    variants = {name: config.variant(name) for name in config.variants}
    stages = []
    if k == 0:
        stages += [] if isinstance(config.model, Path) else [plan.student(config.model)]
        stages += [plan.collect(env, control=False) for env in config.envs]
        if config.annotate:
            stages += [plan.annotate(env, control=False) for env in config.envs]
        if config.extract_state:
            stages += [plan.extract_state(env) for env in config.envs]
    elif any(c.method != "grpo" for c in (config, *variants.values())):
        # grpo plays its own episodes: no rollout and corrections unless another learns them
        stages += [plan.rollout(env) for env in config.envs]
        stages += [plan.correct(env) for env in config.envs]
    stages += plan.model_stages()
    if k >= 1 and config.control:
        stages += [plan.collect(env, control=True) for env in config.envs]
        if config.annotate:
            stages += [plan.annotate(env, control=True) for env in config.envs]
        stages.append(plan.build_data(control=True))
        stages.append(plan.train(plan.control_start, control=True))
        stages += [plan.eval(env, control=True) for env in config.envs]
    for name, variant in variants.items():
        stages += _Plan(variant, progress, variant=name).model_stages()
    return stages


_NO_CORPUS = {"corpus", "corpus_items"}


class _Plan:
    """Builds each stage's config (validated now, before anything runs) and its work."""

    def __init__(
        self, config: IterateConfig, progress: Progress, *, variant: str | None = None
    ) -> None:
        self.config = config
        self.layout = config.layout
        self.progress = progress
        self.k = config.iter
        self.variant = variant  # None: the iteration's own model (or its control)

    @property
    def start(self) -> Path:
        """The model this iteration's training starts from."""
        k, config = self.k, self.config
        if k == 0 or config.train_from == "start":
            return config.start_model
        return self.layout.model(k - 1)

    @property
    def control_start(self) -> Path:
        """The model this iteration's control trains from: where iteration 1 starts, then the
        control of the iteration before (each control continues the last, as the iterations
        do)."""
        if self.k == 1 or self.config.train_from == "start":
            return self.start
        return self.layout.control_model(self.k - 1)

    def model_stages(self) -> list[Stage]:
        """Train the plan's model (the iteration's, or its variant's) from where the iteration
        starts, then evaluate it on each env."""
        if self.config.method == "grpo":  # it plays its own episodes: no data to build
            stages = [self.grpo(self.start)]
        else:
            stages = [self.build_data(control=False), self.train(self.start, control=False)]
        return stages + [self.eval(env, control=False) for env in self.config.envs]

    def student(self, built: BuiltStudent) -> Stage:
        """The model iteration 0 starts from, initialised with the run's seed."""
        from agentcli.models import build_tiny_model

        out, seed = self.layout.student, self.config.seed
        settings = built.tiny

        def run() -> str:
            build_tiny_model(
                out, seed=seed, hidden=settings.hidden, layers=settings.layers,
                corpus=settings.corpus, corpus_items=settings.corpus_items,
            )  # fmt: skip
            shape = f"hidden {settings.hidden}, {settings.layers} layers"
            return f"tiny model ({shape}, seed {seed}) → {out}"

        return Stage(
            name="student",
            iteration=self.k,
            # a student without a corpus keeps the settings it had before the corpus existed,
            # so that a run built then resumes as the same run
            config={
                "tiny": settings.model_dump(exclude=_NO_CORPUS if not settings.corpus else None),
                "seed": seed,
            },  # fmt: skip
            inputs=[],
            outputs=[out],
            run=run,
        )

    # --- per environment ---------------------------------------------------------------------

    def collect(self, env: str, *, control: bool) -> Stage:
        """The expert's demos; for the control, on the items model k-1 is rolled out on."""
        where = self.layout.env(env)
        settings = self.config.collect
        if control:  # the expert plays as in collect, on the items the student is rolled out on
            items = self._rollout_items
            settings = settings.model_copy(update=items)
        rollout = self._rollout_config(
            env,
            settings,
            out=where.control_demos(self.k) if control else where.demos,
            policy={"kind": "oracle"},
            section="collect",
        )
        return self._stage(
            control_stage("collect") if control else "collect",
            rollout,
            inputs=[],
            outputs=[rollout.episodes_path, rollout.config_path],
            run=lambda: self._roll_out(rollout, f"{env}: {{}} demos"),
            env=env,
        )

    def annotate(self, env: str, *, control: bool) -> Stage:
        from agentcli.teacher.stages import annotate

        where = self.layout.env(env)
        demos = where.control_demos(self.k) if control else where.demos
        out = where.control_annotated_demos(self.k) if control else where.annotated_demos
        config = self._teacher_config(AnnotateConfig, env, demos=demos, out=out)
        return self._stage(
            control_stage("annotate") if control else "annotate",
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
        by_llm = self.config.teacher.is_llm
        source: dict[str, Any] = {"demos": where.demos} if by_llm else self._rollout_items
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

        model = self._model(control=control)
        rollout = self._rollout_config(
            env,
            self.config.eval,
            out=self._eval(env, control=control),
            policy=self._student(self.config.eval.policy, model),
            section="eval",
        )

        def run() -> str:
            rows = evaluate(rollout, self._on_progress(rollout))
            row = next(row for row in rows if row.env == env and row.category == "all")
            return (
                f"{env}: success {row.success_rate:.1%}, score {row.mean_score:.3g},"
                f" {row.mean_steps:.1f} steps over {row.episodes} items → {rollout.out}"
            )

        return self._stage(
            self._name("eval", control=control),
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

        out = self._data(control=control)
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
                    "view": self.config.view,
                    "seed": self.config.seed,
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
                write_training_set(self.config.method, records, path, self.config.view)
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
            if control:  # the expert's episodes of this control and the earlier ones
                for j in range(1, self.k + 1):
                    inputs += [where.control_demos(j), where.control_annotated_demos(j)]
        return Stage(
            name=self._name("build-data", control=control),
            iteration=self.k,
            config={env: config_as_data(config) for env, config in configs.items()},
            inputs=inputs,
            outputs=[out],
            run=run,
        )

    def train(self, start: Path, *, control: bool) -> Stage:
        from agentcli.train.launch import train

        data = self._data(control=control)
        # dpo renders whole pairs with the chat template: the section's rendering is for the
        # run's bc/sft iterations (grpo's stage leaves it out likewise)
        dpo = self.config.method == "dpo"
        settings = self.config.train.model_dump(exclude={"rendering"} if dpo else None)
        self._seed_and_name(settings["hyperparameters"], control=control)
        config = validate_config(
            TrainConfig,
            {
                **settings,  # the settings, then this stage's target
                "method": self.config.method,
                "data": data / FILE_NAMES[self.config.method],
                "model": start,
                "out": self._model(control=control),
                "resume": True,  # an interrupted train continues from its last checkpoint
            },
            source="the train section",
        )

        def run() -> str:
            return train(config).line() + f" → {config.out}"

        return self._stage(
            self._name("train", control=control),
            config,
            inputs=[config.data, start],
            outputs=[config.out],
            run=run,
        )

    def grpo(self, start: Path) -> Stage:
        """GRPO from ``start`` on every env, each on its servers (one env: a server list)."""
        from agentcli.train_eval import train

        envs = self.config.envs
        servers = [url for env in envs for url in self.config.env_servers.get(env, [])]
        if servers and len(envs) > 1:
            raise UsageError(
                "grpo over several envs starts their built-in servers: drop env_servers, or"
                " train one env"
            )
        # what the train section says (unset: grpo's own defaults, e.g. a step of one group),
        # less bc/sft's rendering
        settings = self.config.train.model_dump(exclude_unset=True, exclude={"rendering"})
        self._seed_and_name(settings.setdefault("hyperparameters", {}), control=False)
        config = validate_config(
            TrainConfig,
            {
                **settings,
                "method": "grpo",
                "model": start,
                "out": self._model(control=False),
                "resume": True,  # an interrupted train continues from its last checkpoint
                "grpo": {
                    **self.config.grpo.model_dump(),
                    "envs": envs,
                    "env_server": servers,
                    "view": self.config.view.model_dump(),
                },
            },
            source="the train and grpo sections",
        )

        def run() -> str:
            return train(config).line() + f" → {config.out}"

        return self._stage(
            self._name("train", control=False),
            config,
            inputs=[start],
            outputs=[config.out],
            run=run,
        )

    # --- helpers -----------------------------------------------------------------------------

    def _by(self, *, control: bool) -> str | None:
        """Whose model a stage makes: the control's, the variant's, None: the iteration's."""
        return CONTROL if control else self.variant

    def _name(self, stage: str, *, control: bool) -> str:
        if control:
            return control_stage(stage)
        return f"{self.variant}-{stage}" if self.variant else stage

    def _seed_and_name(self, hyperparameters: dict[str, Any], *, control: bool) -> None:
        """The run's seed; the control's and a variant's tracker run named apart from the
        iteration's (its settings, so its run name)."""
        hyperparameters["seed"] = self.config.seed
        by = self._by(control=control)
        if by and hyperparameters.get("run_name"):
            hyperparameters["run_name"] += f"-{by}"

    def _data(self, *, control: bool) -> Path:
        if control:
            return self.layout.control_data(self.k)
        if self.variant:
            return self.layout.variant_data(self.k, self.variant)
        return self.layout.data(self.k)

    def _model(self, *, control: bool) -> Path:
        if control:
            return self.layout.control_model(self.k)
        if self.variant:
            return self.layout.variant_model(self.k, self.variant)
        return self.layout.model(self.k)

    def _eval(self, env: str, *, control: bool) -> Path:
        where = self.layout.env(env)
        if control:
            return where.control_eval(self.k)
        if self.variant:
            return where.variant_eval(self.k, self.variant)
        return where.eval(self.k)

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

    @property
    def _rollout_items(self) -> dict[str, Any]:
        """The items the student is rolled out on, as settings of a stage that picks items."""
        return self.config.rollout.model_dump(include=set(ItemSelection.model_fields))

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
                "view": self.config.view,
            },
            source=f"the {section} section",
        )

    def _student(self, settings: BaseModel, model: Path) -> dict[str, Any]:
        """The stage's policy on ``model``: loaded here (local) or served by an engine the stage
        launches on it (vllm, sglang), so each stage plays the checkpoint it is meant to."""
        policy = {**settings.model_dump(), "seed": self.config.seed}
        if policy["kind"] in ("local", *ENGINES):
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

        stats = execute(config, self._on_progress(config))
        return line.format(stats.total) + (
            f", success {stats.success_rate:.1%} ({stats.errors} errors) → {config.episodes_path}"
        )

    def _on_progress(self, config: RolloutConfig) -> Callable[[Any], None]:
        name = f"{config.env} {config.episodes_path.parent.name}"

        def on_progress(stats: Any) -> None:
            self.progress(name, stats.finished, stats.pending)

        return on_progress

    def _teach(self, stage: Callable[..., Any], config: Any) -> str:
        def on_item(stats: Any) -> None:
            self.progress(f"{config.env} {stats.stage}", stats.done + stats.failed, stats.total)

        stats = stage(config, on_item)
        failed = f", {stats.failed} failed (see {stats.failures})" if stats.failed else ""
        spent = f", ${stats.spent:.4f} spent" if stats.calls is not None else ""
        return f"{config.env}: {stats.done + stats.skipped} done{failed}{spent} → {stats.output}"


def no_progress(stage: str, done: int, total: int | None) -> None:
    return None
