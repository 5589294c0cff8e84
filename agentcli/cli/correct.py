"""``agentgym correct``: the teacher's better reason and action for each step of the student's
failed episodes."""

from __future__ import annotations

from agentcli.cli import _options
from agentcli.cli._teacher import run_stage, stage_config


def correct(
    env: _options.Env,
    rollout: _options.Rollout = None,
    teacher: _options.TeacherKind = None,
    base_url: _options.BaseUrl = None,
    model_name: _options.ModelName = None,
    state: _options.PrivilegedStateFile = None,
    threshold: _options.Threshold = None,
    max_episodes: _options.MaxEpisodes = None,
    out: _options.Out = None,
    concurrency: _options.TeacherConcurrency = None,
    max_cost: _options.MaxCost = None,
    dry_run: _options.DryRun = False,
    config: _options.ConfigFile = None,
    print_config: _options.PrintConfig = False,
    overrides: _options.Overrides = None,
) -> None:
    """Correct the student's episodes: for every step, a better reason and action (resumable).

    Example: agentgym correct --env textcraft --rollout runs/x/iter0/rollout --teacher oracle
    """
    from agentcli.teacher.stages import CorrectConfig, correct

    resolved = stage_config(
        CorrectConfig, config, overrides, teacher=teacher, env=env, rollout=rollout,
        base_url=base_url, model_name=model_name, state=state, threshold=threshold,
        max_episodes=max_episodes, out=out, concurrency=concurrency, max_cost=max_cost,
        dry_run=dry_run,
    )  # fmt: skip
    run_stage(correct, resolved, print_config=print_config)
