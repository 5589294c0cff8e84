"""build-data on a real textcraft run: oracle demos, a random student's rollouts and the oracle
teacher's corrections of them, laid out as ``iterate`` lays them out."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from agentcli.conversation import StudentView, episode_conversation, episode_style, turn_text
from agentcli.data.build import BuildDataConfig, build_data, is_held_out
from agentcli.data.jsonl import read_records, write_records
from agentcli.errors import UsageError
from agentcli.policy.oracle import OraclePolicy
from agentcli.records import (
    ChatRecord,
    Correction,
    Episode,
    PreferenceRecord,
)
from agentcli.run_layout import RunLayout
from tests.support.cli import agentgym
from tests.support.random_policy import rollout
from tests.support.runs import corrected_run

DEMO_ITEMS = list(range(1, 41, 2))
STUDENT_ITEMS = {0: list(range(2, 30, 3)), 1: list(range(3, 15, 3))}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    return corrected_run(RunLayout(tmp_path_factory.mktemp("run")), "textcraft", DEMO_ITEMS,
                         STUDENT_ITEMS)  # fmt: skip


@pytest.fixture
def run(finished_run, tmp_path):
    """A copy of the finished run that a test may change."""
    return RunLayout(shutil.copytree(finished_run.root, tmp_path / "run"))


VIEW_FIELDS = set(StudentView.model_fields)


def _build(run: RunLayout, **options) -> tuple[list, list, object]:
    view = StudentView(**{key: options.pop(key) for key in VIEW_FIELDS & options.keys()})
    # tests build several settings into one run: each replaces the last
    config = BuildDataConfig(run=run.root, view=view, overwrite=True, **options)
    summary = build_data(config)
    if config.method == "bc":
        read = [json.loads(path.read_text()) for path in (config.train_path, config.test_path)]
        return *read, summary
    model = PreferenceRecord if config.method == "dpo" else ChatRecord
    return read_records(config.train_path, model), read_records(config.test_path, model), summary


def _corrected_steps(run: RunLayout, k: int) -> list[tuple[Episode, int, str]]:
    episodes = {e.item_id: e for e in read_records(run.rollout(k), Episode)}
    return [
        (
            episodes[c.item_id],
            s.t,
            turn_text(
                s.corrected_reason,
                s.corrected_action,
                style=episode_style(episodes[c.item_id]),
            ),
        )
        for c in read_records(run.corrections(k), Correction)
        for s in c.steps
        if s.is_corrected
    ]


def test_iteration_0_clones_the_successful_demos(run):
    train, test, summary = _build(run, method="sft", iter=0)
    demos = [d for d in read_records(run.demos, Episode) if d.success]
    assert sorted(r.item_id for r in train + test) == sorted(d.item_id for d in demos)
    by_item = {d.item_id: d for d in demos}
    assert all(r.messages == episode_conversation(by_item[r.item_id]) for r in train + test)
    assert summary.sources == {"demos": len(demos)}
    assert yaml.safe_load((run.data(0) / "sft.config.yaml").read_text())["method"] == "sft"


def test_iteration_0_prefers_annotated_demos_and_writes_agentgym_json_for_bc(run):
    demos = read_records(run.demos, Episode)
    annotated = [
        d.model_copy(update={"steps": [s.model_copy(update={"reason": "why"}) for s in d.steps]})
        for d in demos
    ]
    write_records(run.annotated_demos, annotated)
    train, test, _ = _build(run, method="bc", iter=0, holdout=0)
    assert test == [] and len(train) == sum(d.success for d in demos)
    for record in train:
        assert set(record) == {"item_id", "conversations"}
        gpt = [turn for turn in record["conversations"] if turn["from"] == "gpt"]
        assert gpt[0]["loss"] is False and all(turn["loss"] for turn in gpt[1:])
        assert all(turn["value"].startswith("Thought:\nwhy\n\nAction:\n") for turn in gpt[1:])


def test_iteration_1_learns_corrections_in_the_students_own_conversation(run):
    train, test, summary = _build(run, method="sft", iter=1, holdout=0)
    corrected = _corrected_steps(run, 0)
    assert summary.sources["iter0"] == len(corrected) > 0
    by_target = {(r.item_id, len(r.messages)): r for r in train}
    for episode, t, target in corrected:
        record = by_target[(episode.item_id, 2 + 2 * t + 2)]
        seen = episode_conversation(episode)[: 2 + 2 * t + 1]  # up to step t's observation
        assert [(m.role, m.content) for m in record.messages[:-1]] == [
            (m.role, m.content) for m in seen
        ]
        assert [m.loss for m in record.messages if m.role == "assistant"] == [False] * (t + 1) + [
            True
        ]
        assert record.messages[-1].content == target


def test_dpo_pairs_the_correction_with_the_students_turn_and_never_an_equal_one(run):
    corrections = read_records(run.corrections(0), Correction)
    step = corrections[0].steps[0]  # make one kept step whose turn the teacher leaves as it is
    corrections[0].steps[0] = step.model_copy(
        update={
            "corrected_reason": step.original_reason,
            "corrected_action": step.original_action,
            "is_corrected": False,
        }
    )
    write_records(run.corrections(0), corrections)
    train, test, summary = _build(run, method="dpo", iter=1, keep_uncorrected=True)
    assert summary.dropped_equal == 1 and "demos" not in summary.sources
    pairs = train + test
    assert len(pairs) == sum(len(c.steps) for c in corrections) - 1
    assert all(pair.chosen != pair.rejected for pair in pairs)
    assert all(pair.prompt[-1].role == "user" and len(pair.chosen) == 1 for pair in pairs)

    single, _, _ = _build(run, method="dpo", iter=1, format="single-prompt", holdout=0)
    assert all(isinstance(p.prompt, str) and p.chosen != p.rejected for p in single)
    assert len(single) == len(_corrected_steps(run, 0))


def test_steps_per_episode_keeps_each_episodes_first_learned_steps(run):
    corrections = read_records(run.corrections(0), Correction)
    _, _, capped = _build(run, method="sft", iter=1, holdout=0, steps_per_episode=2)
    first_two = sum(min(2, sum(s.is_corrected for s in c.steps)) for c in corrections)
    assert capped.sources["iter0"] == first_two < len(_corrected_steps(run, 0))

    train, _, every = _build(
        run, method="sft", iter=1, holdout=0, keep_uncorrected=True, steps_per_episode=1
    )
    assert every.sources["iter0"] == len(corrections)
    at_step_0 = [r for r in train if len(r.messages) == 4]  # instruction, Ok., observation, target
    assert len(at_step_0) == len(corrections)


def test_a_history_window_learns_demos_step_by_step_and_reasons_can_be_left_out(run):
    train, _, summary = _build(run, method="sft", iter=1, holdout=0, history_steps=1, reasons=False)
    demos = [d for d in read_records(run.demos, Episode) if d.success]
    assert summary.sources["demos"] == sum(d.n_steps for d in demos)
    assert max(len(r.messages) for r in train) == 6  # instruction, Ok., a turn, now, target
    for record in train:
        assert [m.loss for m in record.messages[1::2]][-1] is True
        assert not any(m.loss for m in record.messages[:-1])
        assert all(m.content.startswith("Action:\n") for m in record.messages[3::2])

    bare, _, _ = _build(run, method="sft", iter=1, holdout=0, history_steps=0, instruction=False)
    assert {len(r.messages) for r in bare} == {2}  # the observation, the target
    instructions = {d.instruction for d in read_records(run.demos, Episode)}
    assert not any(r.messages[0].content in instructions for r in bare)


def test_first_step_repeats_learns_each_demos_first_step_that_many_times(run):
    once, _, _ = _build(run, method="bc", iter=0, holdout=0, history_steps=0)
    thrice, _, summary = _build(run, method="bc", iter=0, holdout=0, history_steps=0,
                                first_step_repeats=3)  # fmt: skip
    demos = [d for d in read_records(run.demos, Episode) if d.success]
    assert summary.sources["demos"] == len(once) + 2 * len(demos)
    firsts = [record for record in once if record["conversations"][2]["value"].startswith(
        tuple(d.steps[0].observation[:40] for d in demos))]  # fmt: skip
    assert len(firsts) == len(demos)
    for record in once:  # every example of the first build, the first steps three times
        times = thrice.count(record)
        assert times == (3 if record in firsts else 1), record["item_id"]
    with pytest.raises(ValueError, match="history window"):
        _build(run, method="bc", iter=0, holdout=0, first_step_repeats=3)


def test_mixing_balances_iterations(run):
    sizes = {k: len(_corrected_steps(run, k)) for k in STUDENT_ITEMS}
    assert sizes[0] != sizes[1], "the two iterations should differ in size"
    _, _, balanced = _build(run, method="sft", iter=2, mix="balanced")
    assert balanced.sources["iter0"] == balanced.sources["iter1"] == min(sizes.values())
    _, _, every = _build(run, method="sft", iter=2, mix="all")
    assert (every.sources["iter0"], every.sources["iter1"]) == (sizes[0], sizes[1])
    _, _, latest = _build(run, method="sft", iter=2, mix="none")
    assert set(latest.sources) == {"demos", "iter1"}
    again, _, _ = _build(run, method="sft", iter=2, mix="balanced")
    first, _, _ = _build(run, method="sft", iter=2, mix="balanced", out=run.root / "copy")
    assert again == first  # seeded


def test_split_by_item_id_is_stable_as_items_are_added(run):
    ids = [f"textcraft_{i}" for i in range(4000)]
    held = [i for i in ids if is_held_out(i, 0.05, 0)]
    assert 0.03 < len(held) / len(ids) < 0.07
    assert held == [i for i in ids[:4000] if is_held_out(i, 0.05, 0)]
    assert held[:5] != [i for i in ids if is_held_out(i, 0.05, 1)][:5]  # the seed matters

    demos = read_records(run.demos, Episode)
    write_records(run.demos, demos[: len(demos) // 2])
    small_train, small_test, _ = _build(run, method="sft", iter=0, holdout=0.3)
    write_records(run.demos, demos)
    train, test, _ = _build(run, method="sft", iter=0, holdout=0.3)
    assert {r.item_id for r in small_test} <= {r.item_id for r in test}
    assert {r.item_id for r in small_train} <= {r.item_id for r in train}
    assert small_test and small_train


def test_single_prompt_puts_the_history_in_one_message(run):
    train, _, _ = _build(run, method="sft", iter=0, format="single-prompt", holdout=0)
    demos = [d for d in read_records(run.demos, Episode) if d.success]
    assert len(train) == sum(d.n_steps for d in demos)
    for record in train:
        user, assistant = record.messages
        assert (user.role, assistant.role, assistant.loss) == ("user", "assistant", True)
        assert user.content.startswith(demos[0].instruction)
    short, _, _ = _build(run, method="sft", iter=1, format="single-prompt", history_steps=1)
    prompts = [record.messages[0].content for record in short]
    # the first observation (it states the goal), one earlier step, the current observation
    assert all(prompt.count("\nObservation: ") <= 3 for prompt in prompts)
    assert any("earlier steps not shown: " in prompt for prompt in prompts)


def test_missing_inputs_say_which_stage_to_run(run):
    with pytest.raises(UsageError, match="--iter 1 or later"):
        _build(run, method="dpo", iter=0)
    with pytest.raises(UsageError, match="run iteration 2's rollout stage first"):
        _build(run, method="sft", iter=3, mix="all")


def test_command_writes_the_files_and_one_summary_line(run):
    result = agentgym("build-data", "--method", "sft", "--iter", "1", "--run", str(run.root))
    assert result.returncode == 0, result.stderr
    [line] = result.stdout.strip().splitlines()
    assert "iter0" in line and "demos" in line and str(run.data(1) / "sft.jsonl") in line
    saved = (run.data(1) / "sft.config.yaml").read_text()
    assert "iter: 1" in saved and "mix: balanced" in saved

    shown = agentgym("build-data", "--method", "dpo", "--iter", "2", "--run", str(run.root),
                     "--print-config", "mix=none", "view.history_steps=8")  # fmt: skip
    assert shown.returncode == 0 and "mix: none" in shown.stdout
    assert "  history_steps: 8" in shown.stdout and not run.data(2).exists()

    wrong = agentgym("build-data", "--method", "sft", "--iter", "1", "--run", str(run.root),
                     "--mix", "sometimes")  # fmt: skip
    assert wrong.returncode == 2 and wrong.stderr.strip().count("\n") == 0
    assert "mix" in wrong.stderr


def test_the_control_learns_as_many_expert_states_on_the_same_items(run):
    rollout("textcraft", STUDENT_ITEMS[0], run.control_demos(1), OraclePolicy())
    experts = {e.item_id: e for e in read_records(run.control_demos(1), Episode) if e.success}
    corrected = len(_corrected_steps(run, 0))
    train, _, summary = _build(run, method="sft", iter=1, control=True, holdout=0)
    assert summary.sources == {"demos": len(DEMO_ITEMS), "control": corrected}
    assert BuildDataConfig(run=run.root, method="sft", iter=1, control=True).out_dir == (
        run.control_data(1)
    )
    states = []
    for record in train[len(DEMO_ITEMS) :]:
        episode = experts[record.item_id]  # an expert episode on an item the student played
        observations = [m.content for m in record.messages[2::2]]
        t = len(observations) - 1
        assert observations == [step.observation for step in episode.steps[: t + 1]]
        step = episode.steps[t]
        assert record.messages[-1].content == turn_text(
            step.reason, step.action, style=episode_style(episode)
        )
        learned = [m.loss for m in record.messages if m.role == "assistant"]
        assert learned == [False] * (t + 1) + [True]  # the acknowledgement, t turns, the target
        states.append((record.item_id, t))
    available = sum(episode.n_steps for episode in experts.values())
    uses = [states.count(state) for state in set(states)]
    # every state once before any twice
    assert max(uses) - min(uses) <= 1 and len(set(states)) == min(available, corrected)


def test_the_control_is_built_from_the_expert_states_collected_for_it(run):
    with pytest.raises(ValueError, match="--iter 1 or later and method bc or sft"):
        BuildDataConfig(run=run.root, method="sft", iter=0, control=True)
    with pytest.raises(
        UsageError,
        match="rolled out on into it .iterate's control-collect stage of iteration 1",
    ):
        _build(run, method="sft", iter=1, control=True)


def test_a_later_control_learns_the_expert_on_every_rounds_items_as_its_iteration_does(run):
    """Iteration 2 learns the corrections of rounds 0 and 1; its control as many states of the
    expert's episodes on both rounds' items (the controls of iterations 1 and 2 collected
    them), an item played in both rounds once."""
    rollout("textcraft", STUDENT_ITEMS[0], run.control_demos(1), OraclePolicy())
    with pytest.raises(UsageError, match="control-collect stage of iteration 2"):
        _build(run, method="sft", iter=2, control=True)
    items = [STUDENT_ITEMS[0][0], *STUDENT_ITEMS[1]]  # the first round's first item again
    rollout("textcraft", items, run.control_demos(2), OraclePolicy())
    experts = {
        e.item_id: e
        for path in (run.control_demos(1), run.control_demos(2))
        for e in read_records(path, Episode)
        if e.success
    }
    _, _, iteration = _build(run, method="sft", iter=2, holdout=0)
    corrected = iteration.sources["iter0"] + iteration.sources["iter1"]
    train, _, summary = _build(run, method="sft", iter=2, control=True, holdout=0)
    assert summary.sources == {"demos": len(DEMO_ITEMS), "control": corrected}
    assert BuildDataConfig(run=run.root, method="sft", iter=2, control=True).out_dir == (
        run.control_data(2)
    )
    states = [(r.item_id, len(r.messages[2::2]) - 1) for r in train[len(DEMO_ITEMS) :]]
    assert {item for item, _ in states} <= experts.keys()
    available = sum(episode.n_steps for episode in experts.values())
    assert corrected > 2 * available  # so that states repeat, each as often as the others
    uses = [states.count(state) for state in set(states)]
    # every state once before any twice: the item of both rounds, had it been taken twice,
    # would come twice as often as the others
    assert max(uses) - min(uses) <= 1 and len(set(states)) == min(available, corrected)


def test_the_training_set_does_not_depend_on_the_order_episodes_finished_in(run):
    first, _, _ = _build(run, method="sft", iter=1, holdout=0, control=False)
    for path in (run.demos, run.rollout(0), run.corrections(0)):
        records = path.read_text().splitlines()
        path.write_text("\n".join(reversed(records)) + "\n")
    again, _, _ = _build(run, method="sft", iter=1, holdout=0, out=run.root / "again")
    assert again == first


def test_a_set_built_with_other_settings_is_replaced_only_when_asked(run):
    command = ["build-data", "--method", "sft", "--iter", "1", "--run", str(run.root)]
    assert agentgym(*command).returncode == 0
    built = (run.data(1) / "sft.jsonl").read_text()
    assert agentgym(*command).returncode == 0  # the same settings: built again, the same
    assert (run.data(1) / "sft.jsonl").read_text() == built

    other = agentgym(*command, "--mix", "all")
    assert other.returncode == 2 and other.stderr.strip().count("\n") == 0
    assert "mix: 'balanced' → 'all'" in other.stderr and "--overwrite" in other.stderr
    assert (run.data(1) / "sft.jsonl").read_text() == built  # nothing lost
    assert agentgym(*command, "--mix", "all", "--overwrite").returncode == 0
