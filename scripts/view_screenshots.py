"""The screenshots of docs/view.md: `agentgym view` on a run, in headless Chromium.

    PYTHONPATH=. .venv/bin/python scripts/view_screenshots.py runs/quickstart/seed0  # make demo

Serves the run as `agentgym view` does and writes, into docs/ (or --out):

- view-run.png: the overview (the results, report.png, every file of the run);
- view-episode.png: a failed episode of model 0's rollout beside the teacher's correction,
  the one whose first disagreement comes latest on the first page of failed episodes;
- view-across.png: a held-out item model 0 lost, beside the other models' episodes of it.

Needs Chromium (`make chromium`) and the test suite's browser driver (hence PYTHONPATH=.).
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.browser import Browser  # noqa: E402
from tests.support.view_server import running_view  # noqa: E402

WIDTH = 1280


def _get(url: str) -> dict:
    with urllib.request.urlopen(url) as response:
        return json.loads(response.read())


def _route(name: str, **params: object) -> str:
    return f"#{name}?{urllib.parse.urlencode(params)}"


def _save(browser: Browser, path: Path, *, full_page: bool = False) -> None:
    """A screenshot in 256 colours: a third of the bytes, no difference to see in a page."""
    from PIL import Image

    browser.screenshot(path, full_page=full_page)
    with Image.open(path) as shot:
        shot.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(
            path, optimize=True
        )


def _show(browser: Browser, url: str, route: str) -> None:
    browser.goto(url + route)
    browser.wait_for(f"document.body.dataset.ready === {json.dumps(route or '#')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="A run directory, e.g. runs/quickstart/seed0.")
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    with running_view(args.run) as served:
        api = served.url + "api/"
        datasets = _get(api + "overview")["datasets"]
        rollout = next(d["id"] for d in datasets if d["role"] == "rollout")
        held_out = [d["id"] for d in datasets if d["role"] == "eval"]
        failed = _get(f"{api}list?{urllib.parse.urlencode({'d': rollout, 'success': 'false'})}")
        corrected = [row for row in failed["rows"] if row.get("first_change") is not None]
        if not corrected:
            sys.exit(f"{args.run}: no failed episode of {rollout} has a correction to show")
        shown = max(corrected, key=lambda row: row["first_change"])
        lost = _get(f"{api}list?{urllib.parse.urlencode({'d': held_out[0], 'success': 'false'})}")
        with Browser(width=WIDTH, height=900) as browser:
            _show(browser, served.url, "")
            _save(browser, args.out / "view-run.png", full_page=True)
            browser.resize(WIDTH, 1300)
            _show(browser, served.url, _route("episode", d=rollout, row=shown["row"]))
            _save(browser, args.out / "view-episode.png")
            if lost["rows"]:
                browser.resize(WIDTH, 560)
                first_lost = lost["rows"][0]["row"]
                _show(browser, served.url, _route("episode", d=held_out[0], row=first_lost))
                _save(browser, args.out / "view-across.png")
    print(f"wrote {args.out}/view-run.png, view-episode.png, view-across.png")


if __name__ == "__main__":
    main()
