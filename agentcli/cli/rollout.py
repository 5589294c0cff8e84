"""``agentgym rollout``: run a student policy in an environment and record its episodes."""

from __future__ import annotations

from agentcli.cli import _options
from agentcli.cli._rollout import roll_out
from agentcli.rollout import RolloutConfig

rollout = _options.command(
    """Run a model in an environment; write one Episode per item (resumable).

    Example: agentgym rollout --env textcraft --model models/tiny --split train --out runs/x/rollout
    """,
    _options.ENV, _options.STUDENT, _options.ITEMS, _options.EPISODES, _options.STUDENT_VIEW,
    _options.RESUMABLE_OUT,
    config=RolloutConfig,
    run=roll_out,
)  # fmt: skip
