"""The static export: what it writes, what it refuses to overwrite; and the server's port."""

from __future__ import annotations

import json
import socket

import pytest

from agentcli.data.jsonl import write_records
from agentcli.errors import UsageError
from agentcli.view.export import CHUNK, MARKER, export_site
from agentcli.view.server import bind
from tests.support.view_records import episode


@pytest.fixture
def episodes(tmp_path):
    path = tmp_path / "episodes.jsonl"
    write_records(path, [episode(i, success=i % 2 == 0) for i in range(CHUNK + 3)])
    return path


def _data(script) -> object:
    """The value an exported data script hands the page."""
    text = script.read_text()
    assert text.startswith("agentgymData(") and text.endswith(");\n")
    return json.loads(text[text.index(", ") + 2 : -3])


def test_the_export_holds_the_page_the_data_and_each_raw_record(tmp_path, episodes):
    out = tmp_path / "site"
    exported = export_site(episodes, out, overwrite=False)
    assert (exported.datasets, exported.records) == (1, CHUNK + 3)
    assert 'data-mode="export"' in (out / "index.html").read_text()
    assert {path.name for path in (out / "assets").iterdir()} == {"app.js", "style.css"}
    overview = _data(out / "data" / "overview.js")
    assert overview["chunk"] == CHUNK and overview["datasets"][0]["folder"] == "0"
    rows = _data(out / "data" / "0" / "rows.js")["rows"]
    assert len(rows) == CHUNK + 3 and rows[1]["success"] is False
    second = _data(out / "data" / "0" / "chunk-1.js")
    assert [entry["page"]["item_id"] for entry in second] == [f"babyai_{CHUNK + i}"
                                                              for i in range(3)]  # fmt: skip
    assert "go to the ball 101" in second[1]["text"]  # what the page's text search looks in
    lines = episodes.read_text().splitlines(keepends=True)
    assert (out / "raw" / "0" / f"{CHUNK + 2}.json").read_text() == lines[CHUNK + 2]


def test_an_export_never_replaces_a_directory_of_the_users(tmp_path, episodes):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(UsageError, match="exists and is not empty: choose a new directory"):
        export_site(episodes, mine, overwrite=False)
    with pytest.raises(UsageError, match=f"no export of agentgym view wrote \\(no {MARKER}\\)"):
        export_site(episodes, mine, overwrite=True)
    assert [path.name for path in mine.iterdir()] == ["notes.txt"]


def test_overwrite_replaces_an_earlier_export_whole(tmp_path, episodes):
    out = tmp_path / "site"
    export_site(episodes, out, overwrite=False)
    (out / "raw" / "0" / "999.json").write_text("stale")
    write_records(episodes, [episode(7)])
    export_site(episodes, out, overwrite=True)
    assert sorted(path.name for path in (out / "raw" / "0").iterdir()) == ["0.json"]
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith(".")] == []


def test_a_failed_export_leaves_nothing(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item_id": "babyai_1"}\n')
    with pytest.raises(UsageError, match="not an Episode"):
        export_site(bad, tmp_path / "site", overwrite=False)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["bad.jsonl"]


def test_a_port_in_use_is_one_line_before_anything_is_served(episodes):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(UsageError, match=f"cannot listen on 127.0.0.1:{port} .*--port 0"):
            bind(episodes, "127.0.0.1", port)


def test_port_0_binds_a_free_port_and_says_which(episodes):
    server = bind(episodes, "127.0.0.1", 0)
    try:
        assert server.url == f"http://127.0.0.1:{server.sock.getsockname()[1]}/"
    finally:
        server.sock.close()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--export", "site", "--port", "9000"], "--port and --host are for serving"),
        (["--overwrite"], "--overwrite replaces an earlier export: give --export DIR too"),
    ],
)
def test_options_that_would_do_nothing_are_refused(episodes, options, message):
    from typer.testing import CliRunner

    from agentcli.cli.main import app

    invoked = CliRunner().invoke(app, ["view", str(episodes), *options])
    assert isinstance(invoked.exception, UsageError) and message in str(invoked.exception)
