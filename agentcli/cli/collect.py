"""``agentgym collect``: expert demonstrations (a rollout of the env's oracle)."""

from __future__ import annotations

from agentcli.cli import _options
from agentcli.cli._output import show_config
from agentcli.cli._rollout import (
    print_rollout_summary,
    rollout_config,
    run_with_progress,
)


def collect(
    env: _options.Env,
    out: _options.Out = None,
    split: _options.Split = None,
    limit: _options.Limit = None,
    data: _options.Data = None,
    env_server: _options.EnvServer = None,
    concurrency: _options.Concurrency = None,
    max_rounds: _options.MaxRounds = None,
    config: _options.ConfigFile = None,
    print_config: _options.PrintConfig = False,
    overrides: _options.Overrides = None,
) -> None:
    """Expert demonstrations: the env's oracle plays each item (resumable).

    Example: agentgym collect --env textcraft --split train --limit 500 --out runs/demo/demos.jsonl
    """
    resolved = rollout_config(
        config, overrides, policy="oracle", env=env, split=split or "train", limit=limit,
        data=data, env_server=env_server, concurrency=concurrency, max_rounds=max_rounds,
        out=out,
    )  # fmt: skip
    if print_config:
        show_config(resolved)
        return
    print_rollout_summary(resolved, run_with_progress(resolved))
