"""Options shared by the commands, derived from the config fields they set, and ``command``,
which builds a command from groups of them.

One declaration per knob (STYLE.md 14): an ``Option`` names the config field it sets, and that
field gives the option its type, default, bounds and help, as TRL's parser derives arguments
from dataclass fields. An ``Option`` says only what must differ on the command line (another
flag, a type the shell can give, help that the field cannot say), with the reason beside it;
``tests/unit/cli/test_options_match_fields.py`` checks every option against its field.

A command is: options → its pydantic config (``agentcli.config.resolve_config``, with
``--config FILE`` and ``key=value`` overrides) → one call into core code. An option left off
sets nothing, so the config file's value stands; ``--help`` shows the field's default, which
is what the config takes when no source sets the key.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, get_origin

import typer
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from agentcli.cli._output import show_config
from agentcli.config import field_at, resolve_config, strip_optional

# --- options that set no config field ----------------------------------------------------------

Env = Annotated[
    str | None,
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
OutDir = Annotated[
    Path,
    typer.Option("--out", "-o", help="Directory to write the model to.", file_okay=False),
]


# --- options of config fields ------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """The command-line option of the config field at ``key`` (dotted; default: the option's
    own name). The rest is the field's unless given here, each time with the reason:

    - ``flags``: the option's names (default: ``--<name>``; a bool field that is off by
      default is a flag that turns it on, one that is on has ``--no-<name>`` too);
    - ``help``: default: the field's description (a list's adds that the option repeats);
    - ``type``: what the shell gives, when the field's type is not that (a section given as
      text, which the field parses);
    - ``show_default``: False where the field's default is not what happens when no source
      sets the key (a validator infers it);
    - ``panel``: the ``--help`` panel it is listed in.
    """

    key: str | None = None
    flags: tuple[str, ...] = ()
    help: str | None = None
    type: Any = None
    show_default: bool = True
    panel: str | None = None

    def parameter(
        self, name: str, model: type[BaseModel], filled: Mapping[str, Any] | None = None
    ) -> inspect.Parameter:
        """The command parameter ``name`` of this option for the config ``model``. ``filled``:
        what a validator of ``model`` fills in for keys no source sets (by key), shown as the
        default instead of the field's."""
        key = self.key or name
        info = field_at(model, key)
        kind = self.type or strip_optional(info.annotation)
        default = (filled or {}).get(key, _plain_default(info))
        flags = self.flags
        if not flags and kind is bool and default is not True:
            flags = ("--" + name.replace("_", "-"),)
        text = self.help or info.description or ""
        if get_origin(kind) is list:  # the flag form of a list, which the field cannot say
            text += " Repeat the option for several."
        option = typer.Option(
            *flags,
            help=text,
            show_default=self.show_default,
            rich_help_panel=self.panel,
            **_bounds(info, kind),
        )
        annotation = Annotated[kind | None, option, Knob(model, key, self)]
        return inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
        )


@dataclass(frozen=True)
class Knob:
    """Marks a command parameter as the option of ``model``'s field at ``key`` (declared by
    ``option``), for the test that holds each option to its field."""

    model: type[BaseModel]
    key: str
    option: Option


def _plain_default(info: FieldInfo) -> Any:
    """A field's default as a command-line default: None for a required field or one built
    by a factory (a list, a section), which --help does not show."""
    if info.is_required() or info.default_factory is not None:
        return None
    return info.default


def _bounds(info: FieldInfo, kind: Any) -> dict[str, Any]:
    """A number field's bounds as Typer's ``min`` / ``max``: its closed ones (``ge``, ``le``),
    and a whole number's strict ones too (``gt=0`` is ``min=1``). Typer's ranges are closed, so
    a field with a strict bound on a float gets no range at all (a half range would invite
    what the other half refuses); the config's validation refuses such values either way."""
    if kind not in (int, float):
        return {}
    limits: dict[str, Any] = {}
    for constraint in info.metadata:
        for name in ("ge", "gt", "le", "lt"):
            value = getattr(constraint, name, None)
            if value is None:
                continue
            if name in ("gt", "lt"):
                if kind is not int:
                    return {}
                value = value + 1 if name == "gt" else value - 1
            limits["min" if name in ("ge", "gt") else "max"] = value
    return limits


# --- groups --------------------------------------------------------------------------------------

Group = Mapping[str, Option]

# The env is required by the config, yet the flag or --config may give it.
ENV: Group = {"env": Option(flags=("--env", "--task"))}  # --task: AgentGym's name for it
RESUMABLE_OUT: Group = {"out": Option(), "overwrite": Option()}
ITEMS: Group = {
    "split": Option(), "limit": Option(), "skip": Option(), "data": Option(), "task_types": Option()
}  # fmt: skip
EPISODES: Group = {"env_server": Option(), "concurrency": Option(), "max_rounds": Option()}
VIEW: Group = {"prompt": Option("view.prompt")}
# a model's own view, and leave to show it another (rollout, eval)
STUDENT_VIEW: Group = {**VIEW, "other_view": Option()}
STUDENT: Group = {
    "model": Option("policy.model"),
    # the kind follows from what is given (agentcli.endpoints.with_kind), which its help says
    "policy": Option("policy.kind", show_default=False),
    "base_url": Option("policy.base_url"),
    "model_name": Option("policy.model_name"),
    "seed": Option("policy.seed"),
    "temperature": Option("policy.temperature"),
    "actions": Option("policy.actions"),
}
TEACHER: Group = {
    # the kind follows from what is given (agentcli.endpoints.with_kind), which its help says
    "teacher": Option("teacher.kind", show_default=False),
    "base_url": Option("teacher.base_url"),
    "model_name": Option("teacher.model_name"),
    "concurrency": Option("teacher.concurrency"),
    "max_cost": Option("teacher.max_cost"),
    "dry_run": Option("teacher.dry_run"),
}
CONFIG_PARAMETERS = [
    inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind)
    for name, kind, default in [
        ("config", ConfigFile, None),
        ("print_config", PrintConfig, False),
        ("overrides", Overrides, None),
    ]
]


def command(
    doc: str,
    *groups: Group,
    config: type[BaseModel],
    run: Callable[[Any], None],
    fixed: Mapping[str, Any] | None = None,
    filled: Mapping[str, Any] | None = None,
) -> Callable[..., None]:
    """A typer command taking the options of ``groups`` (then ``--config``, ``--print-config``
    and overrides): it resolves ``config`` from them and the ``fixed`` keys, then prints it
    or calls ``run``. ``filled``: what ``config``'s validators fill in for keys no source
    sets, which --help shows as their defaults (train: the method's recipe).

    Only the options given on the command line set their keys, so one left off does not
    override the config file's value, even though --help shows it with its default.
    """
    options = {name: option for group in groups for name, option in group.items()}
    parameters = [option.parameter(name, config, filled) for name, option in options.items()]

    def invoke(context: typer.Context, **given: Any) -> None:
        overrides = given.pop("overrides") or ()
        config_file, print_config = given.pop("config"), given.pop("print_config")
        cli = {
            options[name].key or name: value
            for name, value in given.items()
            if on_command_line(context, name)
        }
        resolved = resolve_config(
            config, config_file=config_file, cli={**cli, **(fixed or {})}, overrides=overrides
        )
        if print_config:
            show_config(resolved)
        else:
            run(resolved)

    invoke.__doc__ = doc
    context = inspect.Parameter("context", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)
    invoke.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [context, *parameters, *CONFIG_PARAMETERS]
    )
    return invoke


def on_command_line(context: typer.Context, name: str) -> bool:
    """Whether the user gave option ``name``, rather than Typer its default: Click's parameter
    source, compared by name (Typer keeps its Click, and so that enum, private)."""
    source = context.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")
