"""``agentgym extract-state``: what a teacher may know about each task and the student not."""

from __future__ import annotations

from agentcli.cli import _options
from agentcli.cli._teacher import run_stage, stage_config


def extract_state(
    env: _options.Env,
    demos: _options.Demos = None,
    split: _options.Split = None,
    limit: _options.Limit = None,
    teacher: _options.TeacherKind = None,
    base_url: _options.BaseUrl = None,
    model_name: _options.ModelName = None,
    out: _options.Out = None,
    concurrency: _options.TeacherConcurrency = None,
    max_cost: _options.MaxCost = None,
    dry_run: _options.DryRun = False,
    config: _options.ConfigFile = None,
    print_config: _options.PrintConfig = False,
    overrides: _options.Overrides = None,
) -> None:
    """Privileged state per task: from the simulator (oracle) or read out of demos by an LLM.

    Example: agentgym extract-state --env textcraft --split train --out runs/x
    """
    from agentcli.teacher.stages import ExtractStateConfig, extract_state

    resolved = stage_config(
        ExtractStateConfig, config, overrides, teacher=teacher, env=env, demos=demos,
        split=split, limit=limit, base_url=base_url, model_name=model_name, out=out,
        concurrency=concurrency, max_cost=max_cost, dry_run=dry_run,
    )  # fmt: skip
    run_stage(extract_state, resolved, print_config=print_config)
