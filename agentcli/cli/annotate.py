"""``agentgym annotate``: the reason behind every action of the expert demos."""

from __future__ import annotations

from agentcli.cli import _options
from agentcli.cli._teacher import stage_command

annotate = stage_command(
    """Write each demo step's reason: why the expert acted so, from what it knew (resumable).

    Example: agentgym annotate --env alfworld --demos runs/x/demos.jsonl --teacher openai
    --model-name gpt-4o --base-url https://api.openai.com/v1
    """,
    "annotate",
    {"demos": _options.Option()},
)
