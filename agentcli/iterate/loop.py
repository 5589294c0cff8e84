"""Resolve and run iterations of the LEAP loop: what ``agentgym iterate`` calls."""

from __future__ import annotations

from pathlib import Path

from agentcli.config import config_as_data, dump_config, resolve_config
from agentcli.errors import UsageError
from agentcli.iterate.config import IterateConfig
from agentcli.iterate.report import write_report
from agentcli.iterate.runner import DONE, Manifest, Outcome, check_plan, run_lock, run_stages
from agentcli.iterate.stages import Progress, iteration_stages, no_progress

CONFIG_NAME = "iterate.yaml"  # the iteration's resolved config, in its folder


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
        iteration_stages(config, no_progress)  # builds (and so validates) each stage's config
    return configs


def iteration_line(config: IterateConfig, outcomes: list[Outcome]) -> str:
    """One line on what an iteration did: stages run and skipped, then each eval's result."""
    ran = sum(outcome.action != "skip" for outcome in outcomes)
    evals = {"eval": "", "control-eval": "control "}
    results = [evals[o.stage] + o.summary for o in outcomes if o.stage in evals]
    return (
        f"iteration {config.iter}: {ran} stages run, {len(outcomes) - ran} skipped; "
        + "; ".join(results)
    )


def run_iteration(
    config: IterateConfig,
    *,
    from_stage: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> list[Outcome]:
    """Run, resume or skip each stage of ``config.iter``, recording them in the manifest;
    then write the run's report."""
    layout = config.layout
    with run_lock(layout.lock):
        manifest = Manifest(layout.manifest)
        k = config.iter
        if k > 0 and manifest.stages.get(f"iter{k - 1}/train", {}).get("status") != DONE:
            raise UsageError(
                f"iteration {k} starts from iteration {k - 1}'s model, which is not trained"
                f" yet: run --iter {k - 1} first"
            )
        stages = iteration_stages(config, progress or no_progress)
        check_plan(stages, manifest, from_stage=from_stage, force=force)
        dump_config(config, layout.iteration(k) / CONFIG_NAME)
        record = manifest.iterations.setdefault(str(k), {})
        record["config"] = config_as_data(config)
        manifest.save()
        outcomes = run_stages(stages, manifest, from_stage=from_stage, force=force)
        write_report(layout.root)  # the run's report.csv, .json and .png, up to date
        return outcomes
