"""What view finds in a path and what its pages show: a run's files in order with their
neighbours, list pages, an episode beside its correction, the same item across iterations."""

from __future__ import annotations

import json
import re

import pytest

from agentcli.data.jsonl import write_records
from agentcli.errors import UsageError
from agentcli.evaluate import compute_metrics, write_metrics
from agentcli.iterate.runner import Manifest
from agentcli.records import PrivilegedState
from agentcli.run_layout import RunLayout
from agentcli.view.index import Filters
from agentcli.view.pages import PAGE_SIZE, View, filters_from, repeated_steps, task_line
from agentcli.view.source import open_source
from tests.support.view_records import correction, episode, played

ENV = "babyai"


def make_run(root):
    """A run as iterate leaves it: demos, model 0's rollout and its corrections, the evals of
    models 0 and 1 and of the control on the same held-out items, privileged state."""
    layout = RunLayout(root)
    where = layout.env(ENV)
    manifest = Manifest(layout.manifest)
    for k in (0, 1):
        manifest.iterations[str(k)] = {"config": {"run": str(root), "envs": [ENV]}}
    manifest.save()
    write_records(where.demos, [episode(i, success=True) for i in (10, 11)])
    rollout = [episode(20, actions=["turn left", "turn left", "drop"]), episode(21, success=True)]
    write_records(where.rollout(0), rollout)
    write_records(where.corrections(0), [correction(rollout[0], {1: "move forward", 2: "go"})])
    write_records(where.privileged_state, [PrivilegedState(item_id="babyai_20", text="ball at 3")])
    for folder, won in ((where.eval(0), {}), (where.eval(1), {1}), (where.control_eval(1), {2})):
        evaluated = [episode(i, success=i in won) for i in (1, 2)]
        write_records(folder / "episodes.jsonl", evaluated)
        write_metrics(compute_metrics(evaluated), folder)
    return layout


def test_a_run_lists_its_files_by_iteration_with_the_control_after_iteration_1(tmp_path):
    source = open_source(make_run(tmp_path / "run").root)
    assert source.kind == "run"
    assert [(d.iteration, d.role) for d in source.datasets] == [
        ("0", "demos"), ("0", "rollout"), ("0", "corrections"), ("0", "eval"), ("1", "eval"),
        ("control", "eval"),
    ]  # fmt: skip
    rollout, corrections = source.datasets[1], source.datasets[2]
    assert rollout.id == "babyai/iter0/rollout/episodes.jsonl"
    assert rollout.corrections == corrections.path and corrections.episodes == rollout.path
    assert rollout.privileged is not None


def test_a_variants_eval_comes_after_its_iteration_and_the_control(tmp_path):
    layout = make_run(tmp_path / "run")
    folder = layout.env(ENV).variant_eval(1, "dpo")
    evaluated = [episode(i, success=True) for i in (1, 2)]
    write_records(folder / "episodes.jsonl", evaluated)
    write_metrics(compute_metrics(evaluated), folder)
    datasets = open_source(layout.root).datasets
    assert [(d.iteration, d.role) for d in datasets][-3:] == [
        ("1", "eval"), ("control", "eval"), ("1:dpo", "eval"),
    ]  # fmt: skip
    assert datasets[-1].id == "babyai/iter1/variants/dpo/eval/episodes.jsonl"
    assert datasets[-1].metrics == folder / "metrics.json"


def test_a_later_iterations_control_comes_after_its_iteration(tmp_path):
    layout = make_run(tmp_path / "run")
    manifest = Manifest(layout.manifest)
    manifest.iterations["2"] = {"config": {"run": str(layout.root), "envs": [ENV]}}
    manifest.save()
    where = layout.env(ENV)
    for folder in (where.eval(2), where.control_eval(2)):
        evaluated = [episode(i, success=True) for i in (1, 2)]
        write_records(folder / "episodes.jsonl", evaluated)
        write_metrics(compute_metrics(evaluated), folder)
    write_records(where.control_demos(2), [episode(20, success=True)])
    datasets = open_source(layout.root).datasets
    assert [(d.iteration, d.role) for d in datasets][-4:] == [
        ("control", "eval"), ("2", "eval"), ("control2", "control demos"), ("control2", "eval"),
    ]  # fmt: skip
    assert datasets[-1].id == "babyai/control2/eval/episodes.jsonl"
    assert datasets[-2].label == "the expert on model 1's rollout items"


def test_a_control_is_listed_by_its_folder_whatever_else_the_run_holds(tmp_path):
    """A run laid out by hand (no manifest): its controls' folders are what lists them."""
    layout = RunLayout(tmp_path / "run")
    write_records(layout.demos, [episode(10, success=True)])
    for k in (1, 3):
        evaluated = [episode(1, success=True)]
        write_records(layout.control_eval(k) / "episodes.jsonl", evaluated)
        write_metrics(compute_metrics(evaluated), layout.control_eval(k))
    datasets = open_source(layout.root).datasets
    assert [(d.iteration, d.role) for d in datasets] == [
        ("0", "demos"), ("control", "eval"), ("control3", "eval"),
    ]  # fmt: skip


def test_a_file_in_a_run_finds_its_neighbours_and_a_folder_its_metrics(tmp_path):
    layout = make_run(tmp_path / "run").env(ENV)
    alone = open_source(layout.rollout(0)).datasets[0]
    assert alone.corrections == layout.corrections(0) and alone.iteration == "0"
    corrections = open_source(layout.corrections(0)).datasets[0]
    assert corrections.episodes == layout.rollout(0) and corrections.role == "corrections"
    folder = open_source(layout.eval(1))
    assert folder.kind == "folder" and folder.datasets[0].metrics == layout.eval(1) / "metrics.json"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing", "no such file or directory; give a run directory"),
        ("empty", "is neither a run (no manifest.json) nor an eval or rollout directory"),
        ("notes.txt", "is not a .jsonl file"),
    ],
)
def test_a_path_of_no_kind_view_reads_is_one_line(tmp_path, name, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(UsageError, match=re.escape(message)):
        open_source(tmp_path / name)


def test_the_overview_has_the_report_and_every_file(tmp_path):
    view = View(open_source(make_run(tmp_path / "run").root))
    overview = view.overview()
    rows = {(row["iteration"], row["control"]): row for row in overview["report"]["rows"]}
    assert rows[(1, False)]["success_rate"] == 0.5 and rows[(1, False)]["items"] == 2
    assert rows[(1, False)]["success_se"] == pytest.approx((0.5 * 0.5 / 2) ** 0.5)
    assert rows[(1, True)]["env"] == ENV  # the control, iteration 1's
    assert {(c["model"], c["baseline"]) for c in overview["report"]["comparisons"]} == {
        ("1", "0"), ("1", "control")}  # fmt: skip
    counts = {d["id"]: (d["count"], d["successes"], d["corrected"]) for d in overview["datasets"]}
    assert counts["babyai/iter0/rollout/episodes.jsonl"] == (2, 1, None)
    assert counts["babyai/iter0/correction/corrections.jsonl"] == (1, None, 1)


def test_a_run_not_evaluated_yet_shows_its_episodes_with_a_note(tmp_path):
    layout = make_run(tmp_path / "run")
    for folder in (
        layout.env(ENV).eval(0),
        layout.env(ENV).eval(1),
        layout.env(ENV).control_eval(1),
    ):
        (folder / "metrics.json").unlink()
    overview = View(open_source(layout.root)).overview()
    assert overview["report"]["rows"] == [] and "no iteration" in overview["report"]["note"]
    assert len(overview["datasets"]) == 6


def test_a_list_page_holds_at_most_a_page_of_filtered_rows(tmp_path):
    path = tmp_path / "episodes.jsonl"
    write_records(path, [episode(i, success=i % 4 == 0) for i in range(2 * PAGE_SIZE + 7)])
    view = View(open_source(path))
    page = view.list_page("episodes.jsonl", Filters(success=False), page=1)
    assert page["total"] == 3 * (2 * PAGE_SIZE + 7) // 4 and page["pages"] == 2
    assert len(page["rows"]) == page["total"] - PAGE_SIZE
    assert all(not row["success"] for row in page["rows"])
    assert page["rows"][0]["task"] == f"Your goal: go to the ball {page['rows'][0]['row']}"
    assert view.list_page("episodes.jsonl", Filters(), page=99)["page"] == 2  # the last page
    assert dict(page["facets"]["end_reason"]) == {"max_rounds": 80, "done": 27}


def test_rollout_rows_say_what_the_teacher_changed_and_corrections_link_to_them(tmp_path):
    view = View(open_source(make_run(tmp_path / "run").root))
    rows = view.list_page("babyai/iter0/rollout/episodes.jsonl", Filters())["rows"]
    assert [(row["changed"], row["first_change"]) for row in rows] == [(2, 1), (None, None)]
    corrected = view.list_page("babyai/iter0/correction/corrections.jsonl", Filters())["rows"]
    assert corrected[0]["link"] == {"dataset": "babyai/iter0/rollout/episodes.jsonl", "row": 0}


def test_an_episode_shows_the_teacher_beside_each_step_and_its_privileged_state(tmp_path):
    view = View(open_source(make_run(tmp_path / "run").root))
    page = view.episode_page("babyai/iter0/rollout/episodes.jsonl", 0)
    assert page["privileged"] == "ball at 3"
    assert page["correction"]["first_change"] == 1 and page["correction"]["mismatch"] is None
    students = [(step["action"], step["teacher"]["action"], step["teacher"]["differs"])
                for step in page["steps"]]  # fmt: skip
    assert students == [("turn left", "turn left", False), ("turn left", "move forward", True),
                        ("drop", "go", True)]  # fmt: skip
    assert page["correction"]["raw"] == {"dataset": "babyai/iter0/correction/corrections.jsonl",
                                         "row": 0}  # fmt: skip


def test_a_correction_of_another_rollout_of_the_item_is_not_shown_beside_it(tmp_path):
    layout = make_run(tmp_path / "run")
    rollout = layout.env(ENV).rollout(0)
    shorter = episode(20, actions=["drop"])
    elsewhere = episode(20, actions=["turn left", "turn left", "drop"])
    elsewhere.steps[1].observation = "You see a key."
    wanted = {"the correction has a step 1; the episode has 1": shorter,
              "the correction's step 1 shows another observation": elsewhere}  # fmt: skip
    for mismatch, rolled_again in wanted.items():
        write_records(rollout, [rolled_again])
        page = View(open_source(layout.root)).episode_page(rollout.relative_to(layout.root)
                                                           .as_posix(), 0)  # fmt: skip
        assert mismatch in page["correction"]["mismatch"]
        assert all("teacher" not in step for step in page["steps"])


def test_the_same_item_across_iterations_side_by_side(tmp_path):
    view = View(open_source(make_run(tmp_path / "run").root))
    page = view.episode_page("babyai/iter0/eval/episodes.jsonl", 0)  # babyai_1
    seen = [(o["iteration"], o["success"], o["current"]) for o in page["elsewhere"]]
    assert seen == [("0", False, True), ("1", True, False), ("control", False, False)]
    assert page["elsewhere"][1]["actions"] == ["turn left", "move forward"]
    alone = view.episode_page("babyai/demos.jsonl", 0)  # an item nowhere else
    assert alone["elsewhere"] == []


def test_a_correction_file_alone_shows_its_own_steps(tmp_path):
    layout = make_run(tmp_path / "run")
    lone = tmp_path / "corrections.jsonl"
    lone.write_bytes(layout.env(ENV).corrections(0).read_bytes())
    page = View(open_source(lone)).episode_page("corrections.jsonl", 0)
    assert page["kind"] == "corrections" and page["steps"][2]["teacher"]["action"] == "go"
    assert page["steps"][2]["action"] == "drop"


def test_an_invalid_record_is_one_line_when_its_page_opens(tmp_path):
    path = tmp_path / "episodes.jsonl"
    record = json.loads(episode(1).model_dump_json()) | {"n_steps": 9}
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(UsageError, match="record 0 .babyai_1.: not a valid Episode"):
        View(open_source(path)).episode_page("episodes.jsonl", 0)


def test_query_strings_become_filters():
    assert filters_from({"success": "false", "q": "key", "page": "2"}) == Filters(
        success=False, text="key")  # fmt: skip
    assert filters_from({"success": "any", "corrected": "true"}) == Filters(corrected=True)
    assert filters_from({"loop": "stuck"}) == Filters(loop="stuck")
    assert filters_from({"loop": "any"}) == Filters()
    with pytest.raises(UsageError, match="success='maybe'"):
        filters_from({"success": "maybe"})
    with pytest.raises(UsageError, match="loop='often': expected looped, stuck or any"):
        filters_from({"loop": "often"})


def test_each_step_of_a_loop_names_the_step_it_repeats():
    at_wall, at_door = ("a wall ahead", "turn left"), ("a door ahead", "pick up ball")
    cycling = played(0, [at_wall, at_door, at_door, at_wall, at_door])
    assert repeated_steps(cycling) == [None, None, 1, 0, 1]


def test_a_stuck_episodes_row_names_the_action_it_repeats(tmp_path):
    at_wall, at_door = ("a wall ahead", "pick up ball"), ("a door ahead", "turn left")
    path = tmp_path / "episodes.jsonl"
    write_records(
        path, [played(0, [at_door, at_wall, at_wall]), played(1, [at_wall, at_door, at_wall])]
    )
    page = View(open_source(path)).list_page("episodes.jsonl", Filters(loop="looped"))
    assert [(row["loop"], row["stuck_on"]) for row in page["rows"]] == [
        (1, "pick up ball"),
        (2, None),
    ]
    assert page["facets"]["loop"] == [("looped", 2), ("stuck", 1)]


def test_the_task_line_is_the_goal_line_else_the_first():
    textcraft = {"steps": [{"observation": "Crafting commands:\ncraft 1 x\n\nGoal: craft y."}]}
    assert task_line(textcraft) == "Goal: craft y."
    assert task_line({"steps": [], "instruction": "Buy a red shirt\nmore"}) == "Buy a red shirt"
