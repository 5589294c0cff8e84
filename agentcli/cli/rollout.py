"""``agentgym rollout``: run a student policy in an environment and record its episodes."""

from __future__ import annotations

from agentcli.cli import _options
from agentcli.cli._output import show_config
from agentcli.cli._rollout import (
    print_rollout_summary,
    rollout_config,
    run_with_progress,
)


def rollout(
    env: _options.Env,
    model: _options.Model = None,
    policy: _options.PolicyKind = None,
    base_url: _options.BaseUrl = None,
    model_name: _options.ModelName = None,
    split: _options.Split = None,
    limit: _options.Limit = None,
    data: _options.Data = None,
    env_server: _options.EnvServer = None,
    concurrency: _options.Concurrency = None,
    max_rounds: _options.MaxRounds = None,
    seed: _options.Seed = None,
    temperature: _options.Temperature = None,
    out: _options.Out = None,
    config: _options.ConfigFile = None,
    print_config: _options.PrintConfig = False,
    overrides: _options.Overrides = None,
) -> None:
    """Run a model in an environment; write one Episode per item (resumable).

    Example: agentgym rollout --env textcraft --model models/tiny --split train --out runs/x/rollout
    """
    resolved = rollout_config(
        config, overrides, policy=policy, model=model, base_url=base_url, model_name=model_name,
        seed=seed, temperature=temperature, env=env, split=split, limit=limit, data=data,
        env_server=env_server, concurrency=concurrency, max_rounds=max_rounds,
        out=out,
    )  # fmt: skip
    if print_config:
        show_config(resolved)
        return
    print_rollout_summary(resolved, run_with_progress(resolved))
