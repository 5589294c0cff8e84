"""``agentgym correct``: the teacher's better reason and action for each step of the student's
failed episodes."""

from __future__ import annotations

from agentcli.cli import _options
from agentcli.cli._teacher import stage_command

correct = stage_command(
    """Correct the student's episodes: for every step, a better reason and action (resumable).

    Example: agentgym correct --env textcraft --rollout runs/x/iter0/rollout --teacher oracle
    """,
    "correct",
    {
        "rollout": _options.Option(),
        "state": _options.Option(),
        "threshold": _options.Option(),
        "max_episodes": _options.Option(),
    },
)
