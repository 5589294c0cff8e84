"""`agentgym view` reads nothing outside the run it is given: files in the run that are symbolic
links out of it are not served (404) and not exported (skipped, and said so); a link that stays
inside the run is read as any file."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from agentcli.data.jsonl import write_records
from agentcli.records import PrivilegedState
from tests.support.cli import agentgym
from tests.support.view_records import episode
from tests.support.view_server import running_view
from tests.unit.view.test_pages import ENV, make_run

SECRET = "the-secret-outside-the-run"
ROLLOUT = f"{ENV}/iter0/rollout/episodes.jsonl"
DEMOS = f"{ENV}/demos.jsonl"


def _link(path: Path, target: Path) -> None:
    path.unlink(missing_ok=True)
    path.symlink_to(target)


@pytest.fixture
def run(tmp_path) -> Path:
    """The run of the page tests with four of its files linked to files outside it."""
    layout = make_run(tmp_path / "run")
    where = layout.env(ENV)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    secret_episode = episode(20).model_copy(update={"instruction": SECRET})
    write_records(outside / "episodes.jsonl", [secret_episode])
    write_records(outside / "state.jsonl", [PrivilegedState(item_id=f"{ENV}_20", text=SECRET)])
    (outside / "metrics.json").write_text(
        json.dumps([{"env": ENV, "category": "-", "note": SECRET}])
    )
    (outside / "report.png").write_bytes(SECRET.encode())
    _link(where.rollout(0), outside / "episodes.jsonl")
    _link(where.privileged_state, outside / "state.jsonl")
    _link(where.eval(1) / "metrics.json", outside / "metrics.json")
    _link(layout.root / "report.png", outside / "report.png")
    _link(where.demos, where.eval(0) / "episodes.jsonl")  # inside: read as it is
    return layout.root


def test_files_linked_outside_the_run_are_not_served(run):
    with running_view(run) as view, httpx.Client(base_url=view.url, timeout=30) as client:
        overview = client.get("api/overview")
        assert SECRET not in overview.text
        shown = {dataset["id"] for dataset in overview.json()["datasets"]}
        assert ROLLOUT not in shown and DEMOS in shown
        assert overview.json()["report"]["note"].startswith("no report: ")
        for route, params in [
            ("api/list", {"d": ROLLOUT}),
            ("api/episode", {"d": ROLLOUT, "row": 0}),
            ("api/raw", {"d": ROLLOUT, "row": 0}),
            ("api/plot", {}),
        ]:
            response = client.get(route, params=params)
            assert response.status_code == 404 and SECRET not in response.text, route
        for row in range(2):  # the linked privileged state shows beside no episode
            assert SECRET not in client.get("api/episode", params={"d": DEMOS, "row": row}).text
    _, errors = view.process.communicate(timeout=30)
    assert errors.count("WARNING") == 4 and "left out, it links outside" in errors  # one a file


def test_files_linked_outside_the_run_are_skipped_by_the_export_and_reported(run, tmp_path):
    out = tmp_path / "pages"
    exported = agentgym("view", str(run), "--export", str(out))
    assert exported.returncode == 0, exported.stderr
    assert f"; skipped 4 that link outside {run}" in exported.stdout
    assert "left out, it links outside" in exported.stderr
    written = [path for path in out.rglob("*") if path.is_file()]
    assert written and not any(SECRET.encode() in path.read_bytes() for path in written)
    assert not (out / "data" / "plot.png").exists()
