"""Config resolution: precedence, merging, placeholders, one-line errors, redacted dumps."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import Field, SecretStr, model_validator

from agentcli.config import CommandConfig, config_as_yaml, dump_config, resolve_config
from agentcli.errors import ConfigError


class RolloutSection(CommandConfig):
    concurrency: int = Field(4, ge=1, description="Episodes in flight at once.")
    max_rounds: int = Field(20, ge=1, description="Turns before an episode is cut off.")


class TeacherSection(CommandConfig):
    model: str = Field("gpt-4o-mini", description="Teacher model name.")
    api_key: SecretStr | None = Field(None, description="API key of the teacher endpoint.")


class ExampleConfig(CommandConfig):
    iter: int = Field(0, ge=0, description="Iteration number.")
    run_name: str = Field("run", description="Name of the run.")
    output_dir: Path = Field(Path("runs"), description="Where outputs go.")
    tags: list[str] = Field(default_factory=list, description="Free-form labels.")
    verbose: bool = Field(False, description="Log more.")
    rollout: RolloutSection = Field(default_factory=RolloutSection, description="Rollout.")
    teacher: TeacherSection = Field(default_factory=TeacherSection, description="Teacher.")


class LayersConfig(CommandConfig):
    """One field per layer: each layer sets its own field and every field above it."""

    default: str = Field("default", description="Set by no layer.")
    file: str = Field("default", description="Highest layer: the YAML file.")
    dotenv: str = Field("default", description="Highest layer: .env.")
    env: str = Field("default", description="Highest layer: the environment.")
    cli: str = Field("default", description="Highest layer: a CLI option.")
    override: str = Field("default", description="Highest layer: a key=value override.")


def resolve(model=ExampleConfig, **sources):
    """resolve_config that never reads the real environment or a .env in the working directory."""
    sources.setdefault("environ", {})
    sources.setdefault("dotenv", None)
    return resolve_config(model, **sources)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def error_of(**sources) -> str:
    with pytest.raises(ConfigError) as caught:
        resolve(**sources)
    message = str(caught.value)
    assert "\n" not in message
    return message


# --- precedence and merging ---------------------------------------------------------------------


def test_defaults_when_nothing_is_given():
    assert resolve() == ExampleConfig()


def test_each_layer_beats_the_one_below(tmp_path):
    fields = ["file", "dotenv", "env", "cli", "override"]
    config_file = write(tmp_path / "c.yaml", "".join(f"{f}: file\n" for f in fields))
    dotenv = write(tmp_path / ".env", "".join(f"AGENTGYM_{f.upper()}=dotenv\n" for f in fields[1:]))
    environ = {f"AGENTGYM_{f.upper()}": "env" for f in fields[2:]}
    config = resolve(
        LayersConfig,
        config_file=config_file,
        dotenv=dotenv,
        environ=environ,
        cli={"cli": "cli", "override": "cli"},
        overrides=["override=override"],
    )
    assert config.model_dump() == {name: name for name in ["default", *fields]}


def test_cli_options_left_as_none_are_not_given(tmp_path):
    config_file = write(tmp_path / "c.yaml", "run_name: from-file\n")
    config = resolve(config_file=config_file, cli={"run_name": None, "verbose": True})
    assert (config.run_name, config.verbose) == ("from-file", True)


def test_the_last_override_of_a_key_wins():
    assert resolve(overrides=["run_name=a", "run_name=b"]).run_name == "b"


def test_sections_merge_deeply(tmp_path):
    config_file = write(tmp_path / "c.yaml", "rollout:\n  concurrency: 2\n  max_rounds: 7\n")
    config = resolve(
        config_file=config_file,
        environ={"AGENTGYM_TEACHER__MODEL": "big"},
        overrides=["rollout.concurrency=8"],
    )
    assert config.rollout == RolloutSection(concurrency=8, max_rounds=7)
    assert config.teacher.model == "big"


def test_a_file_extends_its_base_section_by_section(tmp_path):
    write(
        tmp_path / "base.yaml",
        "run_name: base\ntags: [a]\nrollout: {concurrency: 2, max_rounds: 7}\n",
    )
    (tmp_path / "sub").mkdir()
    config_file = write(
        tmp_path / "sub" / "c.yaml", "extends: ../base.yaml\nrollout: {concurrency: 3}\n"
    )
    config = resolve(config_file=config_file, overrides=["tags=[b]"])
    assert (config.run_name, config.tags) == ("base", ["b"])
    assert config.rollout == RolloutSection(concurrency=3, max_rounds=7)


def test_a_bad_value_of_a_base_file_names_that_file(tmp_path):
    write(tmp_path / "base.yaml", "rollout: {concurrency: 0}\n")
    message = error_of(config_file=write(tmp_path / "c.yaml", "extends: base.yaml\n"))
    assert message.startswith("rollout.concurrency: must be ≥ 1")
    assert f"--config {tmp_path / 'base.yaml'}" in message


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("extends: missing.yaml\n", "extends: missing.yaml is not a file"),
        ("extends: [a.yaml]\n", "extends must name one config file"),
        ("extends: c.yaml\n", "the files extend each other in a loop"),
    ],
)
def test_a_bad_extends_is_one_line(tmp_path, text, shown):
    message = error_of(config_file=write(tmp_path / "c.yaml", text))
    assert shown in message


def test_environment_values_are_yaml_scalars_and_nest_with_double_underscore():
    environ = {
        "AGENTGYM_ROLLOUT__CONCURRENCY": "8",
        "AGENTGYM_VERBOSE": "true",
        "AGENTGYM_TAGS": "[a, b]",
    }
    config = resolve(environ=environ)
    assert (config.rollout.concurrency, config.verbose, config.tags) == (8, True, ["a", "b"])


def test_environment_variables_for_other_commands_are_ignored():
    assert resolve(environ={"AGENTGYM_DEBUG": "1", "AGENTGYM_OTHER__X": "2"}) == ExampleConfig()


def test_text_fields_keep_the_value_as_written():
    config = resolve(
        environ={"AGENTGYM_TEACHER__API_KEY": "0123"},
        overrides=["run_name=2024-01-01", "teacher.model=1.5"],
    )
    assert config.run_name == "2024-01-01"
    assert config.teacher.model == "1.5"
    assert config.teacher.api_key.get_secret_value() == "0123"
    assert resolve(overrides=["teacher.api_key=null"]).teacher.api_key is None


def test_dotenv_is_read_and_the_environment_beats_it(tmp_path):
    dotenv = write(
        tmp_path / ".env",
        "# comment\nAGENTGYM_RUN_NAME=from-dotenv\nexport AGENTGYM_ROLLOUT__CONCURRENCY='3'\n"
        "AGENTGYM_TEACHER__MODEL=${HOME}\nOPENAI_API_KEY=unrelated\n",
    )
    config = resolve(dotenv=dotenv, environ={"AGENTGYM_RUN_NAME": "from-env"})
    assert (config.run_name, config.rollout.concurrency) == ("from-env", 3)
    assert config.teacher.model == "${HOME}"  # no interpolation from the real environment


def test_a_missing_dotenv_file_is_skipped(tmp_path):
    assert resolve(dotenv=tmp_path / "absent.env") == ExampleConfig()


# --- {iter} / {prev_iter} -----------------------------------------------------------------------


def test_placeholders_are_filled_in_nested_sections_and_lists(tmp_path):
    config_file = write(
        tmp_path / "c.yaml",
        "output_dir: runs/iter{iter}\n"
        "tags:\n  - from-{prev_iter}\n  - '{\"json\": 1}'\n  - '{{ jinja }}'\n  - '{other}'\n"
        "teacher:\n  model: ckpt-{prev_iter}-to-{iter}\n",
    )
    config = resolve(config_file=config_file, overrides=["iter=3"])
    assert config.output_dir == Path("runs/iter3")
    assert config.tags == ["from-2", '{"json": 1}', "{{ jinja }}", "{other}"]
    assert config.teacher.model == "ckpt-2-to-3"


def test_iter_comes_from_the_model_default_when_not_given():
    assert resolve(overrides=["run_name=iter{iter}"]).run_name == "iter0"


def test_prev_iter_at_iteration_zero_is_an_error():
    message = error_of(overrides=["iter=0", "teacher.model=ckpt-{prev_iter}"])
    assert message.startswith("teacher.model: {prev_iter} needs iter ≥ 1")
    assert "iter=1" in message


def test_a_bad_iter_value_is_an_error():
    message = error_of(overrides=["iter=-1", "run_name={iter}"])
    assert message.startswith("iter: must be a whole number")
    assert "(got -1 from override iter)" in message


# --- errors -------------------------------------------------------------------------------------


def test_unknown_key_suggests_the_closest_one(tmp_path):
    config_file = write(tmp_path / "c.yaml", "rollout:\n  concurency: 8\n")
    message = error_of(config_file=config_file)
    assert message.startswith("rollout.concurency: unknown key")
    assert f"--config {config_file}" in message
    assert "did you mean rollout.concurrency?" in message
    assert "concurrency, max_rounds" in message


def test_unknown_key_never_shows_its_value():
    message = error_of(overrides=["teacher.api_kye=sk-secret"])
    assert "did you mean teacher.api_key?" in message
    assert "sk-secret" not in message


def test_bad_value_names_the_field_the_value_its_source_and_a_fix():
    message = error_of(environ={"AGENTGYM_ROLLOUT__CONCURRENCY": "0"})
    assert message.startswith("rollout.concurrency: must be ≥ 1 (got 0")
    assert "environment variable AGENTGYM_ROLLOUT__CONCURRENCY" in message
    assert "rollout.concurrency=VALUE" in message


def test_bad_list_item_points_at_the_whole_list(tmp_path):
    config_file = write(tmp_path / "c.yaml", "tags:\n  - a\n  - {b: c}\n")
    message = error_of(config_file=config_file)
    assert message.startswith("tags.1: must be a valid string (got a mapping from --config")
    assert message.endswith("override it with tags=VALUE")


def test_all_problems_are_counted_in_the_one_line():
    message = error_of(overrides=["rollout.concurrency=0", "rollout.max_rounds=0", "verbose=[]"])
    assert message.startswith("verbose: must be a valid boolean")  # the first in field order
    assert message.endswith("(and 2 more problems)")


def test_missing_required_field_says_how_to_set_it():
    class NeedsModel(CommandConfig):
        model: str = Field(description="Model to train.")

    with pytest.raises(ConfigError, match=r"^model: required but not given .* model=VALUE$"):
        resolve(NeedsModel)


def test_cross_field_check_is_one_line():
    class Bounded(CommandConfig):
        low: int = Field(1, description="Lower bound.")
        high: int = Field(2, description="Upper bound.")

        @model_validator(mode="after")
        def low_not_above_high(self):
            if self.low > self.high:
                raise ValueError("low must not exceed high")
            return self

    with pytest.raises(ConfigError, match=r"^config: low must not exceed high — change"):
        resolve(Bounded, overrides=["low=5"])


@pytest.mark.parametrize(
    ("override", "shown"),
    [
        ("rollout.concurrency", "rollout.concurrency"),
        ("=3", "=…"),
        ("a..b=1", "a..b=…"),
        ("teacher api_key=sk-secret", "teacher api_key=…"),
    ],
)
def test_override_syntax_errors(override, shown):
    assert error_of(overrides=[override]).startswith(f"override {shown!r}: not KEY=VALUE")


def test_an_override_under_a_numbered_key_of_no_numbered_mapping_is_refused():
    message = error_of(overrides=["iterations.1.train.hyperparameters.learning_rate=3e-4"])
    assert message.startswith("override iterations.1.train.hyperparameters.learning_rate=…: '1'")
    assert "not a mapping keyed by numbers" in message and "in the YAML config" in message


def test_override_value_that_is_not_yaml():
    message = error_of(overrides=["tags=[a, b"])
    assert message.startswith("tags: '[a, b' is not a valid YAML value")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rollout: [unclosed\n", "invalid YAML at line"),
        ("- a\n- b\n", "the top level must be a mapping"),
    ],
)
def test_config_file_errors(tmp_path, text, expected):
    config_file = write(tmp_path / "c.yaml", text)
    message = error_of(config_file=config_file)
    assert message.startswith(f"--config {config_file}: {expected}")


def test_missing_config_file(tmp_path):
    message = error_of(config_file=tmp_path / "absent.yaml")
    assert "cannot read it (No such file or directory)" in message


def test_config_file_that_is_not_text(tmp_path):
    config_file = tmp_path / "c.yaml"
    config_file.write_bytes(b"run_name: \xff\xfe\n")
    assert "cannot read it (not UTF-8 text)" in error_of(config_file=config_file)


def test_an_empty_config_file_means_defaults(tmp_path):
    assert resolve(config_file=write(tmp_path / "c.yaml", "# nothing yet\n")) == ExampleConfig()


# --- dumps --------------------------------------------------------------------------------------


def test_dump_redacts_secrets_and_reloads(tmp_path):
    config = resolve(overrides=["teacher.api_key=sk-secret", "tags=[x]", "output_dir=out/a"])
    path = tmp_path / "run" / "config.yaml"
    dump_config(config, path)
    text = path.read_text(encoding="utf-8")
    assert "sk-secret" not in text and "sk-secret" not in config_as_yaml(config)
    assert yaml.safe_load(text)["teacher"]["api_key"] == "***"
    assert [p.name for p in path.parent.iterdir()] == ["config.yaml"]  # no temp file left
    reloaded = resolve(config_file=path, overrides=["teacher.api_key=sk-secret"])
    assert reloaded == config


def test_yaml_keeps_field_order_and_plain_types():
    data = yaml.safe_load(config_as_yaml(resolve()))
    assert list(data) == list(ExampleConfig.model_fields)
    assert data["output_dir"] == "runs" and data["teacher"]["api_key"] is None
