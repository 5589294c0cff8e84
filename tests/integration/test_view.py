"""`agentgym view` in a real headless Chromium: served on loopback, and exported and opened
from disk. One browser for the module; the screenshots each step takes are kept under the
session's base temp dir, ``<basetemp>/artifacts/view/`` (``pytest --basetemp=DIR`` puts them
in ``DIR/artifacts/view/``)."""

from __future__ import annotations

import contextlib
import json
import signal
import urllib.parse
from pathlib import Path

import pytest

from agentcli.data.jsonl import read_records, write_records
from agentcli.evaluate import compute_metrics, write_metrics
from agentcli.iterate.runner import Manifest
from agentcli.records import Correction
from agentcli.run_layout import RunLayout
from tests.support.browser import NOT_INSTALLED, Browser, chromium
from tests.support.cli import agentgym
from tests.support.runs import evaluated_run
from tests.support.view_records import episode, played
from tests.support.view_server import running_view

ENV = "babyai-putnext"
ROLLOUT = f"{ENV}/iter0/rollout/episodes.jsonl"
EVAL_0 = f"{ENV}/iter0/eval/episodes.jsonl"

pytestmark = pytest.mark.slow  # the run takes a few seconds to play, the browser a few more


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    return evaluated_run(tmp_path_factory.mktemp("view") / "runs" / "quickstart").root


@pytest.fixture(scope="module")
def browser():
    if chromium() is None:
        pytest.skip(NOT_INSTALLED)
    with Browser(width=1280, height=900) as opened:
        yield opened


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    folder = tmp_path_factory.getbasetemp() / "artifacts" / "view"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _shown(browser: Browser, route: str) -> None:
    """Wait until the page has rendered ``route`` (the app marks what it shows)."""
    browser.wait_for(f"document.body.dataset.ready === {json.dumps(route)}")


def _route(name: str, **params: str) -> str:
    return f"#{name}?{urllib.parse.urlencode(params)}"


def _first_correction(run: Path, item_id: str) -> tuple[int, str, str]:
    """(step, student's action, teacher's action) where the teacher first disagrees."""
    corrections = read_records(run / ENV / "iter0/correction/corrections.jsonl", Correction)
    correction = next(c for c in corrections if c.item_id == item_id)
    step = next(s for s in correction.steps if s.is_corrected)
    return step.t, step.original_action, step.corrected_action


def _open_a_failed_episode_beside_its_correction(browser, run, artifacts, name: str) -> None:
    """From the overview: the rollout, filtered to failed episodes; the first one opened."""
    browser.wait_for("document.querySelector('table.results tbody tr')")
    results = browser.text("table.results")
    assert "iteration 1" in results and "control" in results and "100.0 %" in results
    assert "looped (stuck)" in results
    browser.screenshot(artifacts / f"{name}-overview.png", full_page=True)
    browser.click(f'tr.dataset[data-dataset="{ROLLOUT}"] a')
    _shown(browser, _route("list", d=ROLLOUT))
    browser.choose("#filter-success", "false")
    _shown(browser, _route("list", d=ROLLOUT, success="false"))
    badges = browser.evaluate("[...document.querySelectorAll('.episode-row .badge')]"
                              ".map(b => b.textContent)")  # fmt: skip
    assert badges == ["failed"] * 3
    assert browser.text("#count").startswith("3 of 3 episodes")
    browser.screenshot(artifacts / f"{name}-failed.png")
    item_id = browser.text(".episode-row td.item a")
    browser.click(".episode-row td.item a")
    browser.wait_for("document.body.dataset.ready.startsWith('#episode')"
                     " && document.querySelector('article.step')")  # fmt: skip
    t, student, teacher = _first_correction(run, item_id)
    first = "article.step.first-disagreement"
    assert browser.evaluate(f"document.querySelector('{first}').dataset.step") == str(t)
    assert browser.text(f"{first} .turn.student code") == student
    assert browser.text(f"{first} .turn.teacher code") == teacher
    assert (
        browser.evaluate("document.querySelectorAll('article.step.first-disagreement').length") == 1
    )
    assert "The goal object of item" in browser.text("details.privileged")
    browser.evaluate(f"document.querySelector('{first}').scrollIntoView()")
    browser.screenshot(artifacts / f"{name}-episode.png")


def test_the_served_page_filters_failed_episodes_and_shows_the_teacher_beside_them(
    run, browser, artifacts
):
    with running_view(run) as served:
        browser.goto(served.url)
        _open_a_failed_episode_beside_its_correction(browser, run, artifacts, "served")
        raw = browser.evaluate("fetch(document.getElementById('raw').href).then(r => r.json())")
        assert raw["item_id"] == browser.text("h1").split()[0] and raw["success"] is False


def test_the_export_works_from_disk_with_no_server(run, browser, artifacts, tmp_path):
    out = tmp_path / "site"
    exported = agentgym("view", str(run), "--export", str(out))
    assert exported.returncode == 0, exported.stderr
    browser.goto((out / "index.html").as_uri())
    _open_a_failed_episode_beside_its_correction(browser, run, artifacts, "exported")
    # the same item across iterations: model 0 lost it, model 1 (the expert) won it
    browser.goto((out / "index.html").as_uri() + _route("list", d=EVAL_0, q="put the"))
    _shown(browser, _route("list", d=EVAL_0, q="put the"))
    assert browser.text("#count").startswith("4 of 4 episodes")
    browser.click(".episode-row td.item a")
    browser.wait_for("document.querySelector('#elsewhere')")
    heads = browser.evaluate("[...document.querySelectorAll('#elsewhere thead th')].slice(1)"
                             ".map(th => th.innerText)")  # fmt: skip
    assert [("succeeded" in head, "failed" in head) for head in heads] == [
        (False, True),
        (True, False),
        (False, True),
    ]  # iteration 0, iteration 1, the control
    browser.screenshot(artifacts / "exported-elsewhere.png")
    raw_link = browser.evaluate("document.getElementById('raw').href")
    assert json.loads(Path(urllib.parse.urlparse(raw_link).path).read_text())["env"] == ENV


@pytest.mark.parametrize("shown", ["served", "exported"])
def test_the_list_finds_the_episodes_stuck_in_a_loop(shown, browser, artifacts, tmp_path):
    """What `agentgym report` counts as looped (stuck), the list filters and each page names."""
    at_wall, at_door = ("a wall ahead", "pick up ball"), ("a door ahead", "turn left")
    path = tmp_path / "episodes.jsonl"
    write_records(path, [
        played(0, [at_door, at_wall, at_wall]),  # stuck
        played(1, [at_wall, at_door, at_wall]),  # a loop of two steps
        played(2, [at_wall, at_door]),  # out of rounds, in no loop
    ])  # fmt: skip
    with contextlib.ExitStack() as stack:
        if shown == "served":
            browser.goto(stack.enter_context(running_view(path)).url)
        else:
            exported = agentgym("view", str(path), "--export", str(tmp_path / "site"))
            assert exported.returncode == 0, exported.stderr
            browser.goto((tmp_path / "site" / "index.html").as_uri())
        browser.wait_for("document.querySelector('#filter-loop')")  # one file: its list
        choices = browser.evaluate("[...document.querySelectorAll('#filter-loop option')]"
                                   ".map(o => o.textContent)")  # fmt: skip
        assert choices == ["any", "looped (2)", "stuck (1)"]
        browser.choose("#filter-loop", "looped")
        browser.wait_for("document.body.dataset.ready.includes('loop=looped')")
        ended = browser.evaluate("[...document.querySelectorAll('.episode-row td:nth-child(6)')]"
                                 ".map(td => td.textContent)")  # fmt: skip
        assert ended == ["max_rounds · stuck on pick up ball", "max_rounds · loop of 2"]
        browser.screenshot(artifacts / f"{shown}-looped.png")
        browser.click(".episode-row td.item a")
        browser.wait_for("document.querySelector('article.step')")
        assert "ended: max_rounds, stuck repeating an action that changed nothing" in (
            browser.text("p.sub")
        )
        tags = "[...document.querySelectorAll('article.step')]"
        repeats = browser.evaluate(f"{tags}.map(a => a.querySelector('.tag.repeats')?.innerText)")
        assert repeats == [None, None, "repeats step 1"]
        browser.screenshot(artifacts / f"{shown}-stuck.png")


def test_the_overview_names_each_iterations_control(browser, tmp_path):
    """Two rounds, each with its matched control: the table and the paired lines name them
    as `agentgym report` does."""
    layout = RunLayout(tmp_path / "run")
    where = layout.env("babyai")
    manifest = Manifest(layout.manifest)
    for k in (0, 1, 2):
        manifest.iterations[str(k)] = {"config": {"run": str(layout.root), "envs": ["babyai"]}}
    manifest.save()
    won = {where.eval(0): {0}, where.eval(1): {0, 1}, where.control_eval(1): {1},
           where.eval(2): {0, 1, 2, 3}, where.control_eval(2): {0}}  # fmt: skip
    for folder, items in won.items():
        evaluated = [episode(i, success=i in items) for i in range(4)]
        write_records(folder / "episodes.jsonl", evaluated)
        write_metrics(compute_metrics(evaluated), folder)
    with running_view(layout.root) as served:
        browser.goto(served.url)
        browser.wait_for("document.querySelector('table.results tbody tr')")
        models = browser.evaluate("[...document.querySelectorAll('table.results tbody tr')]"
                                  ".map(tr => tr.firstChild.textContent)")  # fmt: skip
        assert models == ["iteration 0", "iteration 1", "control", "iteration 2", "control2"]
        paired = browser.text("ul.comparisons")
        assert "babyai: iteration 2 − the control2: +75.0" in paired
        assert "babyai: iteration 1 − the control: +25.0" in paired


def test_a_path_view_cannot_read_is_one_line(tmp_path):
    shown = agentgym("view", str(tmp_path / "nothing"))
    assert shown.returncode == 2
    assert shown.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'nothing'}: no such file or directory; give a run directory"
        " (runs/<name>), an eval or rollout directory (holding episodes.jsonl), or a JSONL"
        " file of episodes or corrections"
    ]


def test_ctrl_c_ends_a_view_quietly(tmp_path):
    """Ctrl-C is how a view ends: exit 0, not the 'interrupted: rerun to resume' of a stage."""
    path = tmp_path / "episodes.jsonl"
    write_records(path, [episode(1)])
    with running_view(path) as served:
        served.process.send_signal(signal.SIGINT)
        _, errors = served.process.communicate(timeout=30)
    assert served.process.returncode == 0 and errors == ""
