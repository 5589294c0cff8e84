"""Every command-line option of a config field agrees with that field (STYLE.md 14): its help
is the field's description, its bounds the field's, its type the field's, and the default
--help shows is what the config takes when the option is left off. A command with
--print-config derives all its options so, or says here why it cannot.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from typing import Any, get_args, get_origin

import pytest
import typer
import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from typer.testing import CliRunner

from agentcli.cli._options import Knob
from agentcli.cli.main import app
from agentcli.config import field_at, strip_optional

CONFIG_PARAMETERS = {"config", "print_config", "overrides"}
# Commands with --print-config whose options are declared by hand, and why.
HAND_DECLARED = {
    # ServeConfig lives beside the FastAPI app (agentcli/envs/wire/server.py): deriving the options
    # from it would import fastapi whenever the CLI starts.
    "env serve": "ServeConfig",
    # Its options choose which iterations and seeds run, not fields of IterateConfig.
    "iterate": "IterateConfig",
}
# The fewest options with which each derived command resolves its config.
MINIMAL = {
    "collect": ["--env", "textcraft", "--out", "o"],
    "rollout": ["--env", "textcraft", "--model", "m", "--out", "o"],
    "eval": ["--env", "textcraft", "--model", "m"],
    "annotate": ["--env", "textcraft", "--demos", "d.jsonl"],
    "extract-state": ["--env", "textcraft", "--out", "o"],
    "correct": ["--env", "textcraft", "--rollout", "r"],
    "build-data": ["--method", "sft", "--iter", "1", "--run", "r"],
    **{
        f"train {method}": ["--data", "d.json", "--model", "m", "--out", "o"]
        for method in ("bc", "sft", "dpo")
    },
    "train grpo": ["--env", "textcraft", "--model", "m", "--out", "o"],
}
PROSE_DEFAULT = re.compile(r"\bdefault\b", re.IGNORECASE)


def commands(group: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """Every command of the app as (its words, the Click command Typer built)."""
    group = group or typer.main.get_command(app)
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from commands(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


def declared(command: Any) -> dict[str, inspect.Parameter]:
    """The parameters of the command's function, annotations evaluated."""
    function = command.callback.__wrapped__  # Typer calls the function through a wrapper
    return dict(inspect.signature(function, eval_str=True).parameters)


def knob_of(parameter: inspect.Parameter) -> Knob | None:
    return next((meta for meta in get_args(parameter.annotation) if isinstance(meta, Knob)), None)


def knobs(command: Any) -> dict[str, tuple[Knob, inspect.Parameter, Any]]:
    """The options of config fields: name → (the field it sets, its parameter, the option
    Typer built)."""
    options = {option.name: option for option in command.params}
    return {
        name: (knob, parameter, options[name])
        for name, parameter in declared(command).items()
        if (knob := knob_of(parameter)) is not None
    }


def expected_bounds(info: FieldInfo, kind: Any) -> dict[str, Any]:
    """The field's bounds as the closed range Typer can show: ge/le, a whole number's gt/lt
    moved in by one; none at all for a float with a strict bound."""
    if kind not in (int, float):
        return {}
    found: dict[str, Any] = {}
    for constraint in info.metadata:
        for name in ("ge", "gt", "le", "lt"):
            value = getattr(constraint, name, None)
            if value is None:
                continue
            if name in ("gt", "lt") and kind is float:
                return {}
            step = {"gt": 1, "lt": -1}.get(name, 0)
            found["min" if name in ("ge", "gt") else "max"] = value + step
    return found


def disagreements(words: str, knob: Knob, parameter: inspect.Parameter, built: Any) -> list[str]:
    """How the option ``built`` disagrees with its field (empty: it agrees)."""
    info = field_at(knob.model, knob.key)
    where = f"agentgym {words} {built.opts[0]} ↔ {knob.model.__name__}.{knob.key}"
    problems = []
    field_type = strip_optional(info.annotation)
    option_type = strip_optional(parameter.annotation)
    if knob.option.type is not None:  # only a section may be given as something else
        if not (isinstance(field_type, type) and issubclass(field_type, BaseModel)):
            problems.append(f"{where}: type {option_type} overrides a field the shell can give")
    elif option_type != field_type:
        problems.append(f"{where}: type {option_type}, the field's is {field_type}")
    if knob.option.help is None:
        if not info.description:
            problems.append(f"{where}: the field has no description for the option's help")
        elif not (built.help or "").startswith(info.description):
            problems.append(f"{where}: help {built.help!r}, the field's is {info.description!r}")
        if get_origin(field_type) is list and "Repeat the option" not in built.help:
            problems.append(f"{where}: a list's help says that the option repeats")
    # --help shows a default beside the help, but none for a flag that is off
    shown = built.show_default and built.default is not None and built.default is not False
    if shown and PROSE_DEFAULT.search(built.help or ""):
        problems.append(f"{where}: help {built.help!r} restates the default --help shows")
    field_default = None if info.is_required() or info.default_factory else info.default
    if field_default is not None and built.default is None and knob.option.show_default:
        problems.append(f"{where}: shows no default, the field's is {field_default!r}")
    bounds = {"min": built.min, "max": built.max}
    wanted = {"min": None, "max": None, **expected_bounds(info, option_type)}
    if bounds != wanted:
        problems.append(f"{where}: bounds {bounds}, the field's are {wanted}")
    return problems


def resolved_value(config: dict[str, Any], key: str) -> Any:
    for part in key.split("."):
        config = config[part]
    return config


def test_every_option_of_a_config_field_agrees_with_the_field():
    problems = [
        problem
        for words, command in commands()
        for knob, parameter, built in knobs(command).values()
        for problem in disagreements(words, knob, parameter, built)
    ]
    assert not problems, "\n".join(problems)


def test_commands_with_a_config_derive_every_option_from_it():
    problems = []
    for words, command in commands():
        names = set(declared(command))
        if "print_config" not in names or words in HAND_DECLARED:
            continue
        derived = set(knobs(command))
        hand_made = sorted(names - derived - CONFIG_PARAMETERS - {"context"})
        if hand_made:
            problems.append(f"agentgym {words}: options not derived from a field: {hand_made}")
        if words not in MINIMAL:
            problems.append(f"agentgym {words}: add the options it resolves with to MINIMAL")
    assert not problems, "\n".join(problems)
    assert set(HAND_DECLARED) <= {words for words, _ in commands()}  # no stale reason


@pytest.mark.parametrize("words", sorted(MINIMAL))
def test_the_default_help_shows_is_what_the_config_takes(words, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no .env of the checkout's
    command = dict(commands())[words]
    result = CliRunner().invoke(app, [*words.split(), *MINIMAL[words], "--print-config"])
    assert result.exit_code == 0, result.output
    config = yaml.safe_load(result.stdout)
    problems = [
        f"agentgym {words} {built.opts[0]}: --help shows default {built.default!r}, the config"
        f" takes {resolved_value(config, knob.key)!r} for {knob.key}"
        for knob, _, built in knobs(command).values()
        if built.show_default and built.default is not None
        and resolved_value(config, knob.key) != built.default
    ]  # fmt: skip
    assert not problems, "\n".join(problems)


def test_an_option_left_off_leaves_the_config_files_value(tmp_path):
    config = tmp_path / "rollout.yaml"
    config.write_text("env: textcraft\nconcurrency: 4\npolicy: {kind: oracle}\n")
    shown = ["rollout", "--config", str(config), "--out", "o", "--print-config"]
    left_off = CliRunner().invoke(app, shown)
    assert left_off.exit_code == 0, left_off.output
    assert yaml.safe_load(left_off.stdout)["concurrency"] == 4  # not --help's default, 8
    given = CliRunner().invoke(app, [*shown, "--concurrency", "8"])  # the default, said aloud
    assert given.exit_code == 0, given.output
    assert yaml.safe_load(given.stdout)["concurrency"] == 8
