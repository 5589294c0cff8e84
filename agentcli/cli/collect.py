"""``agentgym collect``: expert demonstrations (a rollout of the env's oracle)."""

from __future__ import annotations

from agentcli.cli import _options
from agentcli.cli._rollout import roll_out
from agentcli.rollout import RolloutConfig

collect = _options.command(
    """Expert demonstrations: the env's oracle plays each item (resumable).

    Example: agentgym collect --env textcraft --split train --limit 500 --out runs/demo/demos.jsonl
    """,
    _options.ENV, _options.RESUMABLE_OUT, _options.ITEMS, _options.EPISODES, _options.VIEW,
    config=RolloutConfig,
    run=roll_out,
    fixed={"policy.kind": "oracle"},
)  # fmt: skip
