"""``agentgym annotate``: the reason behind every action of the expert demos."""

from __future__ import annotations

from agentcli.cli import _options
from agentcli.cli._teacher import run_stage, stage_config


def annotate(
    env: _options.Env,
    demos: _options.Demos = None,
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
    """Write each demo step's reason: why the expert acted so, from what it knew (resumable).

    Example: agentgym annotate --env alfworld --demos runs/x/demos.jsonl --teacher openai
    --model-name gpt-4o --base-url https://api.openai.com/v1
    """
    from agentcli.teacher.stages import AnnotateConfig, annotate

    resolved = stage_config(
        AnnotateConfig, config, overrides, teacher=teacher, env=env, demos=demos,
        base_url=base_url, model_name=model_name, out=out, concurrency=concurrency,
        max_cost=max_cost, dry_run=dry_run,
    )  # fmt: skip
    run_stage(annotate, resolved, print_config=print_config)
