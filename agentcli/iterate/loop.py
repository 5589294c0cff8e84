"""Resolve and run iterations of the LEAP loop, for one seed or several: what ``agentgym
iterate`` calls."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from agentcli.config import config_as_data, dump_config, resolve_config
from agentcli.errors import UsageError
from agentcli.iterate.config import IterateConfig
from agentcli.iterate.report import write_report
from agentcli.iterate.runner import DONE, Manifest, Outcome, check_plan, run_lock, run_stages
from agentcli.iterate.seeds import write_sweep_report
from agentcli.iterate.stages import Progress, iteration_stages, no_progress
from agentcli.run_layout import MANIFEST_NAME, control_stage

CONFIG_NAME = "iterate.yaml"  # the iteration's resolved config, in its folder
LOCK_NAME = ".lock"  # held by the iterate working on a run directory, whatever its seeds


def resolve_iterations(
    config_file: Path | None,
    iterations: list[int],
    overrides: list[str],
    seeds: list[int] | None = None,
) -> list[IterateConfig]:
    """Each (seed, iteration)'s config, seed by seed, validated with every stage's config
    before anything runs; ``seeds`` None: the config's own seed."""
    if config_file is None:
        raise UsageError("iterate needs --config FILE (see configs/ for examples)")
    chosen: list[dict[str, int]] = [{}] if seeds is None else [{"seed": s} for s in seeds]
    configs = [
        resolve_config(
            IterateConfig, config_file=config_file, cli={**seed, "iter": k}, overrides=overrides
        )
        for seed in chosen
        for k in iterations
    ]
    for config in configs:
        iteration_stages(config, no_progress)  # builds (and so validates) each stage's config
    return configs


def iteration_line(config: IterateConfig, outcomes: list[Outcome]) -> str:
    """One line on what an iteration did: stages run and skipped, then each eval's result."""
    ran = sum(outcome.action != "skip" for outcome in outcomes)
    results = [
        " ".join(filter(None, [o.stage.removesuffix("eval").removesuffix("-"), o.summary]))
        for o in outcomes
        if o.stage == "eval" or o.stage.endswith("-eval")  # the control's, a variant's
    ]
    return (
        f"seed {config.seed}, iteration {config.iter}: {ran} stages run,"
        f" {len(outcomes) - ran} skipped; " + "; ".join(results)
    )


def run_iterations(
    configs: Sequence[IterateConfig],
    *,
    from_stage: str | None = None,
    force: bool = False,
    progress: Callable[[], AbstractContextManager[Progress]],
    on_iteration: Callable[[IterateConfig, list[Outcome]], None],
) -> Path:
    """Run each config's iteration in turn (all of one run directory), holding the directory's
    lock throughout; ``from_stage`` applies to each seed's first iteration. Each seed's run
    gets its report as its iterations end, the directory the report across its seeds; returns
    the directory."""
    run = configs[0].run
    if (run / MANIFEST_NAME).is_file():
        raise UsageError(
            f"{run} holds a run laid out before runs had a folder per seed (its manifest.json"
            f" is at the top): move it aside, or choose another run directory (run=…)"
        )
    with run_lock(run / LOCK_NAME):
        first_of_seed: set[int] = set()
        for config in configs:
            first = config.seed not in first_of_seed
            first_of_seed.add(config.seed)
            with progress() as report_progress:
                outcomes = run_iteration(
                    config,
                    from_stage=from_stage if first else None,
                    force=force,
                    progress=report_progress,
                )
            on_iteration(config, outcomes)
        write_sweep_report(run)
    return run


def run_iteration(
    config: IterateConfig,
    *,
    from_stage: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> list[Outcome]:
    """Run, resume or skip each stage of ``config.iter`` in its seed's run, recording them in
    the run's manifest; then write the run's report. The caller holds the run directory's
    lock (``run_iterations``)."""
    layout = config.layout
    manifest = Manifest(layout.manifest)
    k = config.iter
    if k > 0 and not _done(manifest, f"iter{k - 1}/train"):
        raise UsageError(
            f"iteration {k} starts from iteration {k - 1}'s model, which is not trained"
            f" yet: run --iter {k - 1} first (seed {config.seed})"
        )
    continues_a_control = k > 1 and config.control and config.train_from == "previous"
    if continues_a_control and not _done(manifest, f"iter{k - 1}/{control_stage('train')}"):
        raise UsageError(
            f"iteration {k}'s control continues iteration {k - 1}'s, which is not trained"
            f" (seed {config.seed}): run --iter {k - 1} with control: true, or set control: false"
            f" for iteration {k} (iterations: {{{k}: {{control: false}}}})"
        )
    stages = iteration_stages(config, progress or no_progress)
    check_plan(stages, manifest, from_stage=from_stage, force=force)
    dump_config(config, layout.iteration(k) / CONFIG_NAME)
    manifest.seed = config.seed
    record = manifest.iterations.setdefault(str(k), {})
    record["config"] = config_as_data(config)
    manifest.save()
    outcomes = run_stages(stages, manifest, from_stage=from_stage, force=force)
    write_report(layout.root)  # the run's report.csv, .json and .png, up to date
    return outcomes


def _done(manifest: Manifest, stage: str) -> bool:
    """Whether the manifest records ``stage`` (``iter<k>/<name>``) as done."""
    return manifest.stages.get(stage, {}).get("status") == DONE
