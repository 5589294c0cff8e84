"""``agentgym eval``: success rate, score and steps of a policy, per env and task category."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from agentcli.cli import _options
from agentcli.cli._output import show_config, stdout
from agentcli.cli._rollout import rollout_config, run_with_progress


def evaluate(
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
    """Evaluate a model: success rate, mean score and steps; summary.csv and metrics.json.

    Example: agentgym eval --env textcraft --model runs/x/iter0/model --split test --out runs/x/eval
    """
    resolved = rollout_config(
        config, overrides, policy=policy, model=model, base_url=base_url, model_name=model_name,
        seed=seed, temperature=temperature, env=env, split=split, limit=limit, data=data,
        env_server=env_server, concurrency=concurrency, max_rounds=max_rounds,
        out=out or Path("runs") / "eval" / env,
    )  # fmt: skip
    if print_config:
        show_config(resolved)
        return
    from agentcli.evaluate import evaluate as run_eval

    rows = run_with_progress(resolved, run_eval)
    table = Table(title=f"eval → {resolved.episodes_path.parent}")
    for column in ("env", "category", "episodes", "success", "score", "steps", "errors"):
        table.add_column(column, justify="left" if column in ("env", "category") else "right")
    for row in rows:
        table.add_row(
            row.env, row.category, str(row.episodes), f"{row.success_rate:.1%}",
            f"{row.mean_score:.3g}", f"{row.mean_steps:.1f}", str(row.errors),
        )  # fmt: skip
    stdout.print(table)
