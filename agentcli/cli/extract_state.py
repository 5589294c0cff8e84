"""``agentgym extract-state``: what a teacher may know about each task and the student not."""

from __future__ import annotations

from agentcli.cli import _options
from agentcli.cli._teacher import stage_command

extract_state = stage_command(
    """Privileged state per task: from the simulator (oracle) or read out of demos by an LLM.

    Example: agentgym extract-state --env textcraft --split train --out runs/x
    """,
    "extract_state",
    {"demos": _options.Option()},
    _options.ITEMS,
)
