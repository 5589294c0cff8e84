"""``iterate``'s config (sections, per-iteration overrides, placeholders, one-line errors) and
the stages it plans for an iteration."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.errors import ConfigError, UsageError
from agentcli.iterate.config import IterateConfig, iteration_numbers, seed_numbers
from agentcli.iterate.loop import resolve_iterations, run_iteration, run_iterations
from agentcli.iterate.runner import DONE, Manifest
from agentcli.iterate.stages import iteration_stages

BASE = """\
run: {run}
envs: [textcraft]
model: models/tiny
rollout: {{limit: 7, max_rounds: 5, policy: {{temperature: 0.5}}}}
collect: {{limit: 20, max_rounds: 30}}
train: {{hyperparameters: {{num_train_epochs: 1, run_name: "iter{{iter}}-from-{{prev_iter}}"}}}}
iterations:
  1: {{train: {{hyperparameters: {{num_train_epochs: 3}}}}}}
"""


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "iterate.yaml"
    path.write_text(BASE.format(run=tmp_path / "run").replace("-from-{prev_iter}", ""))
    return path


def resolve(path: Path, *iterations: int, overrides: tuple[str, ...] = ()) -> list[IterateConfig]:
    return resolve_iterations(path, list(iterations), list(overrides))


def test_an_iteration_gets_its_overrides_and_placeholders(config_file):
    first, second = resolve(config_file, 0, 1)
    first_hp, second_hp = first.train.hyperparameters, second.train.hyperparameters
    assert (first_hp.num_train_epochs, second_hp.num_train_epochs) == (1, 3)
    assert (first_hp.run_name, second_hp.run_name) == ("iter0", "iter1")
    assert second_hp.per_device_train_batch_size == 4  # a key the override leaves alone keeps it


def test_a_key_of_one_iteration_is_overridden_on_the_command_line(config_file):
    overrides = ("iterations.1.train.hyperparameters.learning_rate=3.0e-4",)
    first, second = resolve(config_file, 0, 1, overrides=overrides)
    assert first.train.hyperparameters.learning_rate is None  # iteration 0's own
    assert second.train.hyperparameters.learning_rate == 3.0e-4
    assert second.train.hyperparameters.num_train_epochs == 3  # the config's, kept beside it
    with pytest.raises(ConfigError, match="'2' is a number, and rollout is not a mapping keyed"):
        resolve(config_file, 0, overrides=("rollout.2.limit=1",))


def test_prev_iter_is_refused_in_iteration_zero(tmp_path):
    path = tmp_path / "iterate.yaml"
    path.write_text(BASE.format(run=tmp_path / "run"))
    assert resolve(path, 1)[0].train.hyperparameters.run_name == "iter1-from-0"
    with pytest.raises(ConfigError, match="prev_iter"):
        resolve(path, 0)


def test_sections_take_the_stage_commands_own_fields_and_defaults(config_file):
    config = resolve(config_file, 0)[0]
    assert config.collect.split == "train" and config.eval.split == "test"
    assert (
        config.train.hyperparameters.learning_rate is None
    )  # left to the method's recipe, as `train` does
    with pytest.raises(ConfigError) as error:
        resolve(config_file, 0, overrides=("train.hyperparameters.num_train_epoch=2",))
    message = str(error.value)
    assert message.startswith("train.hyperparameters.num_train_epoch: unknown key")
    assert "train.hyperparameters.num_train_epochs" in message
    with pytest.raises(ConfigError, match=r"^rollout.limit: must be ≥ 1"):
        resolve(config_file, 0, overrides=("rollout.limit=0",))


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("method=dpo", "dpo learns from corrections"),
        ("env_servers={babyai: [http://127.0.0.1:1]}", "env_servers names babyai, not in envs"),
        ("iterations={0: {run: elsewhere}}", "iterations.0 cannot override run"),
        ("teacher.dry_run=true", "teacher.dry_run writes nothing"),
        ("teacher.kind=openai", "teacher: .*an openai teacher needs --base-url"),
    ],
)
def test_inconsistent_configs_are_one_line(config_file, override, message):
    with pytest.raises(ConfigError, match=message) as error:
        resolve(config_file, 0, overrides=(override,))
    assert "\n" not in str(error.value)


def test_a_teacher_section_naming_no_kind_is_the_oracle(config_file):
    config = resolve(config_file, 1, overrides=("teacher.concurrency=2",))[0]
    assert (config.teacher.kind, config.teacher.concurrency) == ("oracle", 2)


def test_an_unknown_env_names_the_closest(config_file):
    with pytest.raises(UsageError, match="did you mean 'textcraft'"):
        resolve(config_file, 0, overrides=("envs=[textcraf]",))


@pytest.mark.parametrize(
    ("iteration", "iterations", "numbers"), [(2, None, [2]), (None, "0-3", [0, 1, 2, 3])]
)
def test_iteration_numbers(iteration, iterations, numbers):
    assert iteration_numbers(iteration, iterations) == numbers


@pytest.mark.parametrize(("iteration", "iterations"), [(None, None), (1, "0-1"), (None, "3-1")])
def test_iteration_numbers_refuse_what_is_not_one_range(iteration, iterations):
    with pytest.raises(UsageError):
        iteration_numbers(iteration, iterations)


def keys(config: IterateConfig) -> list[str]:
    return [stage.key for stage in iteration_stages(config, lambda *_: None)]


def test_the_stages_of_iteration_zero_and_one_per_env(config_file):
    overrides = ("envs=[textcraft, babyai]", "control=true")
    first, second = resolve(config_file, 0, 1, overrides=overrides)
    assert keys(first) == [
        "iter0/collect/textcraft", "iter0/collect/babyai",
        "iter0/annotate/textcraft", "iter0/annotate/babyai",
        "iter0/build-data", "iter0/train", "iter0/eval/textcraft", "iter0/eval/babyai",
    ]  # fmt: skip
    assert keys(second) == [
        "iter1/rollout/textcraft", "iter1/rollout/babyai",
        "iter1/correct/textcraft", "iter1/correct/babyai",
        "iter1/build-data", "iter1/train", "iter1/eval/textcraft", "iter1/eval/babyai",
        "iter1/control-collect/textcraft", "iter1/control-collect/babyai",
        "iter1/control-annotate/textcraft", "iter1/control-annotate/babyai",
        "iter1/control-build-data", "iter1/control-train",
        "iter1/control-eval/textcraft", "iter1/control-eval/babyai",
    ]  # fmt: skip


def test_iteration_one_learns_from_model_zero_and_the_control_matches_it(config_file, tmp_path):
    config = resolve(config_file, 1, overrides=("control=true",))[0]
    stages = {stage.key: stage for stage in iteration_stages(config, lambda *_: None)}
    run = tmp_path / "run" / "seed0"  # the config's seed: 0 unless it says otherwise
    rollout = stages["iter1/rollout/textcraft"].config
    assert rollout["policy"]["model"] == str(run / "iter0" / "model")
    assert rollout["policy"]["temperature"] == 0.5
    assert rollout["out"] == str(run / "textcraft" / "iter0" / "rollout")
    train, control = stages["iter1/train"].config, stages["iter1/control-train"].config
    assert train["model"] == control["model"] == str(run / "iter0" / "model")
    assert train["resume"] is True
    # the same training, on other data, a run of its own in a tracker
    assert train["hyperparameters"].pop("run_name") == "iter1"
    assert control["hyperparameters"].pop("run_name") == "iter1-control"
    assert {k: v for k, v in train.items() if k not in ("data", "out")} == {
        k: v for k, v in control.items() if k not in ("data", "out")
    }
    expert = stages["iter1/control-collect/textcraft"].config
    assert (expert["split"], expert["limit"]) == (rollout["split"], rollout["limit"])
    assert expert["max_rounds"] == 30  # the expert plays as in collect
    assert expert["policy"]["kind"] == "oracle"


def test_train_from_start_trains_iteration_one_and_the_control_afresh(config_file, tmp_path):
    """DAgger's way: both train the model iteration 0 started from on their own data."""
    overrides = ("control=true", "train_from=start")
    config = resolve(config_file, 1, overrides=overrides)[0]
    stages = {stage.key: stage for stage in iteration_stages(config, lambda *_: None)}
    train, control = stages["iter1/train"], stages["iter1/control-train"]
    assert train.config["model"] == control.config["model"] == "models/tiny"
    assert Path("models/tiny") in train.inputs and Path("models/tiny") in control.inputs
    assert train.config["data"] != control.config["data"]
    built = resolve(config_file, 1, overrides=(*overrides, "model={tiny: {hidden: 64}}"))[0]
    stages = {stage.key: stage for stage in iteration_stages(built, lambda *_: None)}
    assert stages["iter1/train"].config["model"] == str(tmp_path / "run" / "seed0" / "student")
    with pytest.raises(ConfigError, match="set train_from: previous for a grpo iteration"):
        resolve(config_file, 1, overrides=("train_from=start", "iterations={1: {method: grpo}}"))


def test_a_later_iterations_control_continues_the_last_control(config_file, tmp_path):
    """Iteration 2's control continues iteration 1's control (as iteration 2 continues model
    1), on the expert's episodes on both rounds' items; afresh with train_from: start."""
    config = resolve(config_file, 2, overrides=("control=true",))[0]
    stages = {stage.key: stage for stage in iteration_stages(config, lambda *_: None)}
    run = tmp_path / "run" / "seed0"
    train, control = stages["iter2/train"].config, stages["iter2/control-train"].config
    assert train["model"] == str(run / "iter1" / "model")
    assert control["model"] == str(run / "control" / "model")
    assert control["out"] == str(run / "control2" / "model")
    assert control["hyperparameters"].pop("run_name") == "iter2-control"
    assert train["hyperparameters"].pop("run_name") == "iter2"
    assert {k: v for k, v in train.items() if k not in ("data", "model", "out")} == {
        k: v for k, v in control.items() if k not in ("data", "model", "out")
    }  # iteration 2's training settings
    expert = stages["iter2/control-collect/textcraft"].config
    assert expert["out"] == str(run / "textcraft" / "control2" / "demos.jsonl")
    assert stages["iter2/control-build-data"].inputs[-4:] == [
        run / "textcraft" / "control" / "demos.jsonl",
        run / "textcraft" / "control" / "demos.annotated.jsonl",
        run / "textcraft" / "control2" / "demos.jsonl",
        run / "textcraft" / "control2" / "demos.annotated.jsonl",
    ]
    assert stages["iter2/control-eval/textcraft"].config["out"] == str(
        run / "textcraft" / "control2" / "eval"
    )
    afresh = resolve(config_file, 2, overrides=("control=true", "train_from=start"))[0]
    stages = {stage.key: stage for stage in iteration_stages(afresh, lambda *_: None)}
    assert stages["iter2/control-train"].config["model"] == "models/tiny"


def test_a_later_control_waits_for_the_last_control(config_file, tmp_path):
    manifest = Manifest(tmp_path / "run" / "seed0" / "manifest.json")
    manifest.stages["iter1/train"] = {"status": DONE}
    manifest.save()
    config = resolve(config_file, 2, overrides=("control=true",))[0]
    with pytest.raises(UsageError, match="iteration 2's control continues iteration 1's"):
        run_iteration(config)


def test_a_dpo_iteration_leaves_the_bc_sft_rendering_to_the_iterations_it_is_for(config_file):
    """The train section is shared: its rendering shapes iteration 0's sft rows, and a dpo
    iteration after it (which renders pairs with the chat template) runs without it."""
    overrides = ("train.rendering.max_length=2048", "train.rendering.batching=padded",
                 "iterations={1: {method: dpo}}")  # fmt: skip
    first, second = resolve(config_file, 0, 1, overrides=overrides)
    stage = {stage.key: stage for stage in iteration_stages(first, lambda *_: None)}
    sft = stage["iter0/train"].config
    assert (sft["rendering"]["max_length"], sft["rendering"]["batching"]) == (2048, "padded")
    stage = {stage.key: stage for stage in iteration_stages(second, lambda *_: None)}
    dpo = stage["iter1/train"].config
    assert dpo["method"] == "dpo"
    assert (dpo["rendering"]["max_length"], dpo["rendering"]["batching"]) == (None, "auto")


def test_iteration_one_waits_for_model_zero(config_file):
    with pytest.raises(UsageError, match="run --iter 0 first"):
        run_iteration(resolve(config_file, 1)[0])


def test_a_grpo_iteration_trains_from_the_last_model_and_evaluates(config_file, tmp_path):
    overrides = ("iterations={2: {method: grpo}}", "grpo.num_generations=4",
                 "grpo.items.limit=16", "view.instruction=false")  # fmt: skip
    config = resolve(config_file, 2, overrides=overrides)[0]
    assert keys(config) == ["iter2/train", "iter2/eval/textcraft"]
    train = iteration_stages(config, lambda *_: None)[0].config
    run = tmp_path / "run" / "seed0"
    assert (train["method"], train["model"]) == ("grpo", str(run / "iter1" / "model"))
    assert train["out"] == str(run / "iter2" / "model") and train["resume"] is True
    grpo = train["grpo"]
    assert (grpo["envs"], grpo["num_generations"], grpo["items"]["limit"]) == (
        ["textcraft"], 4, 16,
    )  # fmt: skip
    assert grpo["view"]["instruction"] is False  # the student's view, as in its other stages
    assert train["hyperparameters"]["per_device_train_batch_size"] == 4  # one group: unset
    for iteration, extra, message in [
        (0, ("method=grpo",), "grpo improves a student"),
        (1, ("method=grpo", "control=true"), "the control matches iteration 1's"),
        (2, ("control=true",), r"set control: false for it \(iterations: \{2: \{control"),
        (2, ("view.history_steps=0",), "multi-turn"),  # refused as its stage is planned
    ]:
        with pytest.raises(ConfigError, match=message):
            keys(resolve(config_file, iteration, overrides=(*overrides, *extra))[0])


def test_variants_train_from_where_their_iteration_starts_and_evaluate_on_its_items(
    config_file, tmp_path
):
    rl = "{method: grpo, train: {hyperparameters: {learning_rate: 1.0e-4}}}"
    variants = f"{{dpo: {{method: dpo}}, rl-from-0: {rl}}}"
    overrides = ("control=true", f"iterations={{1: {{variants: {variants}}}}}")
    config = resolve(config_file, 1, overrides=overrides)[0]
    assert keys(config)[-6:] == [
        "iter1/control-eval/textcraft",
        "iter1/dpo-build-data", "iter1/dpo-train", "iter1/dpo-eval/textcraft",
        "iter1/rl-from-0-train", "iter1/rl-from-0-eval/textcraft",
    ]  # fmt: skip
    stages = {stage.key: stage for stage in iteration_stages(config, lambda *_: None)}
    run, variant = tmp_path / "run" / "seed0", tmp_path / "run" / "seed0" / "iter1" / "variants"
    own, dpo = stages["iter1/train"].config, stages["iter1/dpo-train"].config
    assert (dpo["method"], dpo["model"]) == ("dpo", own["model"])
    assert dpo["data"] == str(variant / "dpo" / "data" / "dpo.jsonl")
    assert dpo["out"] == str(variant / "dpo" / "model")
    # the iteration's settings, but for what the variant sets; a tracker run of its own
    assert dpo["hyperparameters"]["num_train_epochs"] == 3
    assert dpo["hyperparameters"]["run_name"] == "iter1-dpo"
    data = stages["iter1/dpo-build-data"]
    assert data.inputs == stages["iter1/build-data"].inputs  # the iteration's corrections
    assert data.config["textcraft"]["method"] == "dpo"
    rl = stages["iter1/rl-from-0-train"].config
    assert (rl["method"], rl["model"]) == ("grpo", str(run / "iter0" / "model"))
    assert rl["hyperparameters"]["learning_rate"] == 1.0e-4
    evaluated = stages["iter1/rl-from-0-eval/textcraft"].config
    assert evaluated["policy"]["model"] == str(variant / "rl-from-0" / "model")
    assert evaluated["out"] == str(run / "textcraft" / "iter1" / "variants" / "rl-from-0" / "eval")
    same = ("split", "limit", "skip", "max_rounds")
    assert {k: evaluated[k] for k in same} == {
        k: stages["iter1/eval/textcraft"].config[k] for k in same
    }


def test_a_variant_of_iteration_zero_learns_the_demos_by_another_method(config_file, tmp_path):
    config = resolve(config_file, 0, overrides=("variants={bc: {method: bc}}",))[0]
    assert keys(config)[-3:] == ["iter0/bc-build-data", "iter0/bc-train", "iter0/bc-eval/textcraft"]
    stages = {stage.key: stage for stage in iteration_stages(config, lambda *_: None)}
    bc = stages["iter0/bc-train"].config
    assert (bc["method"], bc["model"]) == ("bc", "models/tiny")
    assert bc["data"] == str(
        tmp_path / "run" / "seed0" / "iter0" / "variants" / "bc" / "data" / "bc.json"
    )


def test_a_variants_versus_pairs_it_in_the_report_and_changes_none_of_its_stages(config_file):
    plain = "{dpo: {method: dpo}, bc: {method: bc}}"
    paired = "{dpo: {method: dpo, versus: [bc]}, bc: {method: bc}}"
    [before], [after] = (
        resolve(config_file, 1, overrides=(f"iterations={{1: {{variants: {variants}}}}}",))
        for variants in (plain, paired)
    )
    stages = [
        {stage.key: stage.config for stage in iteration_stages(config, lambda *_: None)}
        for config in (before, after)
    ]
    assert stages[0] == stages[1] and "iter1/dpo-train" in stages[1]


def test_a_grpo_iteration_still_rolls_out_for_a_variant_that_learns_corrections(config_file):
    overrides = ("iterations={2: {method: grpo, variants: {sft: {method: sft}}}}",)
    config = resolve(config_file, 2, overrides=overrides)[0]
    assert keys(config) == [
        "iter2/rollout/textcraft", "iter2/correct/textcraft", "iter2/train",
        "iter2/eval/textcraft", "iter2/sft-build-data", "iter2/sft-train",
        "iter2/sft-eval/textcraft",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("variants", "message"),
    [
        ("{control: {method: dpo}}", "variants.control: name a variant in lower case"),
        ("{control2: {method: dpo}}", "variants.control2: .* not starting with control"),
        ("{Big: {method: dpo}}", "variants.Big: name a variant"),
        ("{dpo: {eval: {limit: 3}}}", "variants.dpo sets eval: a variant learns from its"),
        ("{rl: {method: grpo, train_from: start}}", "set train_from: previous for a grpo"),
        ("{dpo: {method: dpo, versus: [rl]}}", r"variants.dpo.versus must list other variants of"
         r" its iteration, each once \(it has none\)"),
        ("{dpo: {method: dpo, versus: dpo}, rl: {method: grpo}}",
         r"variants.dpo.versus must list other variants of its iteration, each once \(rl\)"),
        ("{dpo: {method: dpo, versus: [rl, rl]}, rl: {method: grpo}}",
         r"variants.dpo.versus must list other variants of its iteration, each once"),
    ],
)  # fmt: skip
def test_a_bad_variant_is_one_line(config_file, variants, message):
    overrides = (f"iterations={{1: {{variants: {variants}}}}}",)
    with pytest.raises(ConfigError, match=message) as error:
        keys(resolve(config_file, 1, overrides=overrides)[0])
    assert "\n" not in str(error.value)


def test_the_runs_seed_seeds_every_stage_in_a_folder_of_its_own(config_file, tmp_path):
    built = ("model={tiny: {hidden: 32, layers: 1}}", "control=true")
    first, second = resolve_iterations(config_file, [0, 1], list(built), seeds=[3])
    assert (first.seed, second.seed) == (3, 3)
    run = tmp_path / "run" / "seed3"
    zero = {stage.key: stage for stage in iteration_stages(first, lambda *_: None)}
    one = {stage.key: stage for stage in iteration_stages(second, lambda *_: None)}
    # the run builds its student first, initialised with the run's seed, and trains it
    assert list(zero)[0] == "iter0/student"
    assert zero["iter0/student"].config == {"tiny": {"hidden": 32, "layers": 1}, "seed": 3}
    assert zero["iter0/student"].outputs == [run / "student"]
    assert zero["iter0/train"].config["model"] == str(run / "student")
    for stages, key in [(zero, "iter0/train"), (one, "iter1/train"), (one, "iter1/control-train")]:
        assert stages[key].config["hyperparameters"]["seed"] == 3, key
    assert one["iter1/rollout/textcraft"].config["policy"]["seed"] == 3
    assert zero["iter0/eval/textcraft"].config["policy"]["seed"] == 3
    assert one["iter1/control-build-data"].config["textcraft"]["seed"] == 3
    assert one["iter1/rollout/textcraft"].config["out"] == str(run / "textcraft/iter0/rollout")


def test_seeds_run_one_after_another_each_with_its_iterations(config_file):
    configs = resolve_iterations(config_file, [0, 1], [], seeds=[0, 1])
    assert [(c.seed, c.iter) for c in configs] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert [c.layout.root.name for c in configs] == ["seed0", "seed0", "seed1", "seed1"]


@pytest.mark.parametrize(
    "override",
    ["train.hyperparameters.seed=1", "data.seed=1", "rollout.policy.seed=1", "eval.policy.seed=1"],
)
def test_a_section_seeded_apart_from_the_run_is_refused(config_file, override):
    section = override.removesuffix(".seed=1")
    with pytest.raises(ConfigError, match=f"{section}.seed: every stage of a run is seeded"):
        resolve(config_file, 0, overrides=(override,))


@pytest.mark.parametrize(
    ("seed", "seeds", "numbers"),
    [(None, None, None), (4, None, [4]), (None, "0-4", [0, 1, 2, 3, 4])],
)
def test_seed_numbers(seed, seeds, numbers):
    assert seed_numbers(seed, seeds) == numbers


@pytest.mark.parametrize(("seed", "seeds"), [(1, "0-1"), (None, "2-1"), (None, "a"), (-1, None)])
def test_seed_numbers_refuse_what_is_not_one_choice(seed, seeds):
    with pytest.raises(UsageError):
        seed_numbers(seed, seeds)


def test_a_run_laid_out_before_seeds_is_not_mixed_with_seeds(config_file, tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text("{}")
    with pytest.raises(UsageError, match="before runs had a folder per seed"):
        run_iterations(resolve(config_file, 0), progress=lambda: None, on_iteration=lambda *_: None)
