"""sciworld over the real scienceworld package (a JVM per session), in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.envs.data.make_sciworld_tasks import task_table_from_simulator
from agentcli.envs.sciworld import SPEC
from agentcli.envs.sciworld.session import TASKS_FILE, _LaunchOptions, task_table
from agentcli.errors import TaskNotFoundError, UsageError

MISSING = SPEC.missing()


def java_test(test):
    """Marks a test that starts a JVM; skips it where Java or the package is missing."""
    return pytest.mark.java(pytest.mark.skipif(MISSING is not None, reason=str(MISSING))(test))


def index_of(task_name: str, variation: int) -> int:
    table = task_table()
    return next(
        i
        for i in range(table.size)
        if (table.item(i).task_name, table.item(i).variation) == (task_name, variation)
    )


@pytest.fixture(scope="module")
def environment():
    if MISSING:
        pytest.skip(MISSING)
    return SPEC.load()


@pytest.fixture(scope="module")
def session(environment):
    session = environment.open_session()
    yield session
    session.close()


def run_expert(session, limit: int = 60):
    transition = None
    for _ in range(limit):
        action = session.expert_action()
        if action is None:
            break
        transition = session.step(action)
        if transition.done:
            break
    return transition


# One item of five task families, each with a short gold path.
EXPERT_ITEMS = (
    ("find-non-living-thing", 0),
    ("lifespan-longest-lived", 0),
    ("chemistry-mix-paint-secondary-color", 0),
    ("power-component", 0),
    ("identify-life-stages-2", 0),
)


@java_test
@pytest.mark.parametrize(("task_name", "variation"), EXPERT_ITEMS)
def test_expert_completes_the_task(session, task_name, variation):
    session.reset(index_of(task_name, variation))
    transition = run_expert(session)
    assert transition.done and transition.success and transition.score == 100
    assert session.expert_action() is None


@java_test
def test_expert_continues_after_student_actions(session):
    session.reset(index_of("power-component", 1))
    for action in ("inventory", "look at agent", "nonsense"):
        session.step(action)
    transition = run_expert(session)  # the gold path is generated now, after a replay
    assert transition.success


ART_STUDIO = ("open door to art studio", "go to art studio", "look around")


@java_test
def test_an_item_does_not_depend_on_what_the_jvm_did_before(session):
    def visit_art_studio():
        session.reset(index_of("chemistry-mix-paint-secondary-color", 0))
        gold = session.expert_action()
        return [session.step(action).observation for action in ART_STUDIO], gold

    first = visit_art_studio()
    session.reset(index_of("chemistry-mix", 0))
    session.expert_action()
    assert visit_art_studio() == first


@java_test
def test_reset_sends_agentgym_fields(session):
    transition = session.reset(0)
    assert transition.observation.startswith("This room is called")
    assert transition.extra["task_name"] == "boil" and transition.extra["var_num"] == 0
    assert transition.extra["task_description"].startswith("Your task is to boil")
    assert not transition.done and not transition.success


@java_test
def test_failed_task_is_done_but_not_a_success(session):
    start = session.reset(index_of("lifespan-longest-lived", 3))
    transition = session.step("focus on door to kitchen")
    assert transition.done and not transition.success
    assert transition.score == -100 and transition.reward == -100 - start.score
    after = session.step("look around")
    assert after.done and "over" in after.observation
    assert session.expert_action() is None


BAD_ACTIONS = ("", "fly to the moon", "focus on", "\x00", "é 漢字", "x" * 2000, "open door", "7")


@java_test
def test_bad_actions_are_observations(session):
    session.reset(index_of("find-animal", 5))
    for action in BAD_ACTIONS:
        transition = session.step(action)
        assert transition.observation and not transition.done


@java_test
def test_privileged_state_holds_description_and_gold_path(environment, session):
    index = index_of("power-component", 2)
    text = environment.privileged_state(index)
    description = session.reset(index).extra["task_description"]
    assert description in text and "focus on task object" in text
    assert f"1. {session.expert_action()}" in text


@java_test
def test_step_before_reset_is_a_usage_error(environment):
    session = environment.open_session()
    try:
        with pytest.raises(UsageError):
            session.step("look around")
    finally:
        session.close()


def _java_children() -> set[int]:
    children = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        comm_end = text.rindex(")")
        parent = int(text[comm_end + 2 :].split()[1])
        if parent == os.getpid() and text[text.index("(") + 1 : comm_end] == "java":
            children.add(int(stat.parent.name))
    return children


@java_test
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_close_ends_the_jvm(environment):
    before = _java_children()
    session = environment.open_session()
    started = _java_children() - before
    assert len(started) == 1
    session.close()
    session.close()  # a second close is harmless
    assert not started & _java_children()


def test_jvm_options_are_set_only_while_launches_run(monkeypatch):
    options = _LaunchOptions("-Dours=1")
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-Dinherited=1")
    with options.applied():
        with options.applied():  # a second session starting meanwhile
            assert os.environ["JAVA_TOOL_OPTIONS"] == "-Dinherited=1 -Dours=1"
        assert os.environ["JAVA_TOOL_OPTIONS"] == "-Dinherited=1 -Dours=1"
    assert os.environ["JAVA_TOOL_OPTIONS"] == "-Dinherited=1"
    monkeypatch.delenv("JAVA_TOOL_OPTIONS")
    with options.applied():
        assert os.environ["JAVA_TOOL_OPTIONS"] == "-Dours=1"
    assert "JAVA_TOOL_OPTIONS" not in os.environ


def test_items_follow_agentgym_order():
    table = task_table()
    assert table.size == 4639
    first, last = table.item(0), table.item(table.size - 1)
    assert (first.task_id, first.task_name, first.variation) == ("1-1", "boil", 0)
    assert (table.item(30).task_name, table.item(30).variation) == ("melt", 0)
    assert (last.task_id, last.task_name, last.variation) == ("8-2", "identify-life-stages-2", 9)
    assert not {t["task_id"] for t in table.tasks} & {"5-1", "9-2", "10-1"}
    assert SPEC.categories(119) == "change-the-state-of-matter-of"
    for index in (-1, table.size):
        with pytest.raises(TaskNotFoundError):
            table.item(index)


def test_splits_are_disjoint_sorted_and_cover_every_item():
    splits = task_table().splits()
    assert set(splits) == {"train", "dev", "test"}
    assert all(ids == sorted(ids) for ids in splits.values())
    every = [i for ids in splits.values() for i in ids]
    assert sorted(every) == list(range(task_table().size))
    assert [len(ids) for ids in splits.values()] == [2312, 1156, 1171]
    assert 21 in splits["test"] and 14 in splits["dev"] and 13 in splits["train"]


@java_test
def test_task_file_matches_the_installed_package():
    from scienceworld import ScienceWorldEnv

    simulator = ScienceWorldEnv()
    try:
        live = task_table_from_simulator(simulator)
    finally:
        simulator.close()
    assert live == json.loads(TASKS_FILE.read_text())["tasks"]


def test_importing_the_module_does_not_import_the_simulator():
    code = "import sys, agentcli.envs.sciworld; assert 'scienceworld' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


_DUMP = """
import json, sys
from agentcli.envs.sciworld import SPEC
session = SPEC.load().open_session()
out = {}
for index in json.loads(sys.argv[1]):
    reset = session.reset(index)
    steps = [session.step(session.expert_action()).observation for _ in range(3)]
    out[index] = [reset.observation, reset.extra, steps]
session.close()
print(json.dumps(out, sort_keys=True))
"""


@pytest.mark.slow  # two JVMs start cold: 15-25 s
@java_test
def test_items_are_identical_across_processes_and_hash_seeds(tmp_path):
    indices = [index_of("chemistry-mix-paint-secondary-color", 0), 3500]
    processes = [  # the two load the items in opposite orders
        subprocess.Popen(
            [sys.executable, "-c", _DUMP, json.dumps(order)],
            stdout=subprocess.PIPE,
            text=True,
            env={"PYTHONHASHSEED": seed, "PATH": os.environ["PATH"], "HOME": str(tmp_path)},
        )
        for seed, order in (("1", indices), ("4242", indices[::-1]))
    ]
    dumps = [process.communicate(timeout=120)[0] for process in processes]
    assert all(process.returncode == 0 for process in processes)
    assert dumps[0] == dumps[1]
    assert len(json.loads(dumps[0])) == len(indices)
