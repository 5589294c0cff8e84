"""Option types shared by every command, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

Env = Annotated[
    str,
    typer.Option(
        "--env",
        "--task",
        help="Environment name (see `agentgym env list`); --task is AgentGym's name for it.",
        show_default=False,
    ),
]
EnvArgument = Annotated[str, typer.Argument(help="Environment name (see `agentgym env list`).")]
ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        help="YAML config; command-line options and key=value overrides take precedence.",
        exists=True,
        dir_okay=False,
        show_default=False,
    ),
]
Overrides = Annotated[
    list[str] | None,
    typer.Argument(
        help="Config overrides as key=value (dotted keys for nested fields), applied last.",
        show_default=False,
    ),
]
PrintConfig = Annotated[
    bool, typer.Option("--print-config", help="Print the resolved config as YAML and exit.")
]
Split = Annotated[
    str | None, typer.Option(help="Split to run (default: per command)", show_default=False)
]
Limit = Annotated[int | None, typer.Option(help="Run only the first N items.", show_default=False)]
Data = Annotated[
    Path | None,
    typer.Option(
        help="AgentGym JSON file whose item ids to run (e.g. an eval set).", show_default=False
    ),
]
EnvServer = Annotated[
    list[str] | None,
    typer.Option(
        "--env-server",
        help="Env server URL; repeat for several (round-robin). Default: start a built-in one.",
        show_default=False,
    ),
]
Concurrency = Annotated[
    int | None, typer.Option(help="Episodes in flight at once (default: 8)", show_default=False)
]
MaxRounds = Annotated[
    int | None, typer.Option(help="Turns per episode (default: the env's)", show_default=False)
]
Out = Annotated[
    Path | None, typer.Option(help="Output: a .jsonl file or a directory.", show_default=False)
]
Model = Annotated[
    Path | None, typer.Option(help="Local model directory (HF format).", show_default=False)
]
PolicyKind = Annotated[
    str | None,
    typer.Option(
        "--policy", help="local | openai | oracle (default: local with --model)", show_default=False
    ),
]
BaseUrl = Annotated[
    str | None,
    typer.Option(
        help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1", show_default=False
    ),
]
ModelName = Annotated[
    str | None, typer.Option(help="Model name at the endpoint.", show_default=False)
]
Seed = Annotated[int | None, typer.Option(help="Sampling seed (default: 0)", show_default=False)]
Temperature = Annotated[
    float | None, typer.Option(help="0 = greedy (default: 0)", show_default=False)
]
OutDir = Annotated[
    Path,
    typer.Option("--out", "-o", help="Directory to write the model to.", file_okay=False),
]
TeacherKind = Annotated[
    str | None,
    typer.Option(
        "--teacher",
        help="openai | oracle (default: openai with --base-url, else oracle)",
        show_default=False,
    ),
]
TeacherConcurrency = Annotated[
    int | None,
    typer.Option(
        help="Records (teacher calls) in flight at once (default: 16)", show_default=False
    ),
]
Demos = Annotated[
    Path | None,
    typer.Option(help="Expert demos (Episodes JSONL), e.g. from `collect`.", show_default=False),
]
Rollout = Annotated[
    Path | None,
    typer.Option(
        help="The student's episodes: a rollout dir or episodes.jsonl.", show_default=False
    ),
]
PrivilegedStateFile = Annotated[
    Path | None,
    typer.Option(
        "--state",
        help="privileged_state.jsonl (default: the run's, if the rollout is in a run)",
        show_default=False,
    ),
]
MaxCost = Annotated[
    float | None,
    typer.Option(
        help="US dollars: stop before a call could take the ledger's total past this.",
        show_default=False,
    ),
]
DryRun = Annotated[
    bool,
    typer.Option("--dry-run", help="Estimate the cost from token counts; send nothing."),
]
Threshold = Annotated[
    float | None,
    typer.Option(
        help="Correct episodes with reward below this (default: failed episodes)",
        show_default=False,
    ),
]
MaxEpisodes = Annotated[
    int | None, typer.Option(help="Correct at most N episodes.", show_default=False)
]
