"""``agentgym view PATH --export DIR``: the same page as the server's, as static files that
work opened from disk (``file://``), with no server.

A page opened from disk may not fetch files, but it may load scripts: the data the server
would answer with is written as scripts that hand it to the page (``data/…js``: each calls
``agentgymData(key, value)``), and each record's line as the file holds it is a JSON file of
its own (``raw/<dataset>/<row>.json``, what the page's "raw JSON" links open). The page
filters, pages and searches in the browser, over every row of the list
(``data/<dataset>/rows.js``) and, for the text search, the lowercased text of every record.

DIR is written whole into a temporary directory beside it, then renamed into place: a failed
export leaves no half of one. An existing DIR is replaced only with ``overwrite``, and only
when an earlier export made it (``MARKER``), so that ``--overwrite`` never empties a
directory of the user's.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.errors import UsageError
from agentcli.view.index import searchable_text
from agentcli.view.pages import View, facets
from agentcli.view.server import ASSETS, asset
from agentcli.view.source import open_source

MARKER = ".agentgym-view"  # written by every export, so --overwrite knows its own
CHUNK = 100  # episode pages per data file: a page loads one file, a search each in turn


@dataclass(frozen=True)
class Exported:
    out: Path
    datasets: int
    records: int
    skipped: tuple[Path, ...]  # files found that link outside the source: not exported


def export_site(path: Path, out: Path, *, overwrite: bool) -> Exported:
    """Write the pages of ``path`` into the directory ``out``."""
    _check_target(out, overwrite=overwrite)
    view = View(open_source(path))
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        records = _write(view, staging)
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Exported(out, len(view.source.datasets), records, view.source.outside)


def _check_target(out: Path, *, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise UsageError(f"--export {out} is a file: give a directory")
    if not out.exists() or not any(out.iterdir()):
        return
    if not overwrite:
        raise UsageError(
            f"--export {out} exists and is not empty: choose a new directory, or pass"
            " --overwrite to replace an earlier export"
        )
    if not (out / MARKER).is_file():
        raise UsageError(
            f"--export {out} holds files that no export of agentgym view wrote (no {MARKER}):"
            " --overwrite replaces only an earlier export; choose another directory"
        )


def _write(view: View, root: Path) -> int:
    html = asset("index.html").decode("utf-8")
    (root / "index.html").write_text(html.replace('data-mode="server"', 'data-mode="export"'))
    (root / "assets").mkdir()
    for name in ASSETS:
        (root / "assets" / name).write_bytes(asset(name))
    (root / MARKER).write_text("written by `agentgym view --export`; --overwrite replaces it\n")
    overview = view.overview() | {"chunk": CHUNK}
    for number, summary in enumerate(overview["datasets"]):
        summary["folder"] = str(number)  # the dataset's files: data/<n>/, raw/<n>/
    (root / "data").mkdir()
    plot = view.plot_path()
    if plot is not None:
        shutil.copyfile(plot, root / "data" / "plot.png")
    _script(root / "data" / "overview.js", "overview", overview)
    records = 0
    for number, dataset in enumerate(view.source.datasets):
        folder, raw = root / "data" / str(number), root / "raw" / str(number)
        folder.mkdir()
        raw.mkdir(parents=True)
        index = view.index(dataset)
        rows = view.all_rows(dataset)
        _script(folder / "rows.js", f"rows:{dataset.id}", {"rows": rows, "facets": facets(index)})
        for start in range(0, len(index), CHUNK):
            chunk: list[dict[str, Any]] = []
            for row in range(start, min(start + CHUNK, len(index))):
                line = index.raw(row)
                (raw / f"{row}.json").write_bytes(line + b"\n")
                chunk.append({"page": view.episode_page(dataset.id, row),
                              "text": searchable_text(json.loads(line))})  # fmt: skip
            _script(folder / f"chunk-{start // CHUNK}.js", f"chunk:{dataset.id}:{start // CHUNK}",
                    chunk)  # fmt: skip
        records += len(index)
    return records


def _script(path: Path, key: str, value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    path.write_text(f"agentgymData({json.dumps(key)}, {text});\n", encoding="utf-8")
