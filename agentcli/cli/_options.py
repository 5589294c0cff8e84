"""Options shared by the commands, declared once: their types, the groups commands are
composed of, and ``command``, which builds a command from groups.

A command is: options → its pydantic config (``agentcli.config.resolve_config``, with
``--config FILE`` and ``key=value`` overrides) → one call into core code. Each ``Option``
names the config key it sets, so a group (the items a stage runs, the student policy, the
teacher) means the same keys in every command that has it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from agentcli import policy, teacher

Env = Annotated[
    str | None,
    typer.Option(
        "--env",
        "--task",
        help="Environment name (see `agentgym env list`); --task is AgentGym's name for it"
        " (or `env:` in --config).",
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
    str | None,
    typer.Option(help="Split to run (default: train; eval: test)", show_default=False),
]
Limit = Annotated[int | None, typer.Option(help="Run only the first N items.", show_default=False)]
Skip = Annotated[
    int | None, typer.Option(help="Skip the split's first N items.", show_default=False)
]
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
    Path | None,
    typer.Option(
        help="Model directory (HF format): loaded here, or served by --policy vllm|sglang.",
        show_default=False,
    ),
]
PolicyKind = Annotated[
    policy.PolicyKind | None,
    typer.Option(
        "--policy",
        help="Who acts (default: openai with --base-url, else local with --model); vllm,"
        " sglang: --model served by that engine, launched for the command",
        show_default=False,
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
TeacherKind = Annotated[
    teacher.TeacherKind | None,
    typer.Option(
        "--teacher",
        help="Who teaches (default: openai with --base-url, else oracle); vllm, sglang:"
        " teacher.model=MODEL served by that engine, launched for the command",
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


Prompt = Annotated[
    Literal["agentgym", "native"] | None,
    typer.Option(
        help="The wording the student is shown: agentgym (AgentGym's, byte for byte, where it"
        " has the env) or native (ours). Default: agentgym",
        show_default=False,
    ),
]


OtherView = Annotated[
    bool,
    typer.Option(
        "--other-view",
        help="Show the model view settings other than those it was trained with (its"
        " student_view.json); else such a setting is refused.",
    ),
]


OutDir = Annotated[
    Path,
    typer.Option("--out", "-o", help="Directory to write the model to.", file_okay=False),
]


Overwrite = Annotated[
    bool,
    typer.Option("--overwrite", help="Replace what the output holds (else a rerun resumes it)."),
]


# --- groups ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """A command-line option: its type (an ``Annotated`` typer option or argument), the config
    key it sets (default: its own name) and its default (``REQUIRED``: none)."""

    annotation: Any
    key: str | None = None
    default: Any = None


REQUIRED = inspect.Parameter.empty
Group = Mapping[str, Option]

ENV: Group = {"env": Option(Env)}  # required by the config: the flag or --config gives it
RESUMABLE_OUT: Group = {"out": Option(Out), "overwrite": Option(Overwrite, default=False)}
ITEMS: Group = {
    "split": Option(Split),
    "limit": Option(Limit),
    "skip": Option(Skip),
    "data": Option(Data),
}
EPISODES: Group = {
    "env_server": Option(EnvServer),
    "concurrency": Option(Concurrency),
    "max_rounds": Option(MaxRounds),
}
VIEW: Group = {"prompt": Option(Prompt, "view.prompt")}
# a model's own view, and leave to show it another (rollout, eval)
STUDENT_VIEW: Group = {**VIEW, "other_view": Option(OtherView, default=False)}
STUDENT: Group = {
    "model": Option(Model, "policy.model"),
    "policy": Option(PolicyKind, "policy.kind"),
    "base_url": Option(BaseUrl, "policy.base_url"),
    "model_name": Option(ModelName, "policy.model_name"),
    "seed": Option(Seed, "policy.seed"),
    "temperature": Option(Temperature, "policy.temperature"),
}
TEACHER: Group = {
    "teacher": Option(TeacherKind, "teacher.kind"),
    "base_url": Option(BaseUrl, "teacher.base_url"),
    "model_name": Option(ModelName, "teacher.model_name"),
    "concurrency": Option(TeacherConcurrency, "teacher.concurrency"),
    "max_cost": Option(MaxCost, "teacher.max_cost"),
    "dry_run": Option(DryRun, "teacher.dry_run", default=False),
}
CONFIG: Group = {
    "config": Option(ConfigFile),
    "print_config": Option(PrintConfig, default=False),
    "overrides": Option(Overrides),
}


def command(
    doc: str,
    *groups: Group,
    config: Callable[[], type],
    run: Callable[[Any], None],
    fixed: Mapping[str, Any] | None = None,
) -> Callable[..., None]:
    """A typer command taking the options of ``groups`` (then ``--config``, ``--print-config``
    and overrides): it resolves ``config()`` (the command's config model, imported only when
    the command runs) from them and the ``fixed`` keys, then prints it or calls ``run``.

    A flag left off (False) sets nothing, so it does not override the config file's value.
    """
    options = {name: option for group in (*groups, CONFIG) for name, option in group.items()}

    def invoke(**given: Any) -> None:
        from agentcli.cli._output import show_config
        from agentcli.config import resolve_config

        overrides = given.pop("overrides") or ()
        config_file, print_config = given.pop("config"), given.pop("print_config")
        cli = {
            options[name].key or name: None if value is False and options[name].default is False
            else value
            for name, value in given.items()
        }  # fmt: skip
        resolved = resolve_config(
            config(), config_file=config_file, cli={**cli, **(fixed or {})}, overrides=overrides
        )
        if print_config:
            show_config(resolved)
        else:
            run(resolved)

    invoke.__doc__ = doc
    invoke.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=option.default,
                annotation=option.annotation,
            )
            for name, option in options.items()
        ]
    )  # fmt: skip
    return invoke
