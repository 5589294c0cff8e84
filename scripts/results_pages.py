"""Write the measured results that pages show from the result files the tool wrote.

    .venv/bin/python scripts/results_pages.py          # rewrite every results block
    .venv/bin/python scripts/results_pages.py --check  # exit 1 if a block is stale

A page (README.md, docs/**/*.md) shows a measured result as a block between
``<!-- results FILE seed=N [KIND] -->`` and ``<!-- /results -->``: FILE is a ``report.json``
of seeds (``agentgym report runs/<name>`` writes one beside a run directory's seed folders,
e.g. docs/results/quickstart.json) and N the seed ``make demo`` or the page's command runs.
KIND ``table`` (the default) is the file's table: that seed's success per model, the mean and
spread across the seeds, each paired difference, and where and how long it was measured;
``seed-lines`` and ``lines`` are the seed's paired comparisons and those across the seeds as
``agentgym report`` prints them; ``task-types`` is the seed's success per task type and model
(an env whose items have types, e.g. alfworld); ``loops`` is, per model and seed, the items
whose episodes ran out of rounds in a loop and, of them, those stuck repeating an action that
changed nothing (seed N's column first). A test runs the check, so a number on a page is always
one the file holds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from agentcli.iterate.report import model_label, record_label

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(
    r"(?P<open><!-- results (?P<file>\S+) seed=(?P<seed>\d+)(?: (?P<kind>[a-z-]+))? -->\n)"
    r"(?P<body>.*?)(?P<close><!-- /results -->)",
    re.S,
)


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def refreshed(text: str, page: Path) -> str:
    """``page``'s ``text`` with every results block rendered anew from its file (named from
    the repository's root)."""

    def render(match: re.Match[str]) -> str:
        file = ROOT / match["file"]
        document = json.loads(file.read_text(encoding="utf-8"))
        seed, kind = int(match["seed"]), match["kind"] or "table"
        if seed not in document["seeds"]:
            raise SystemExit(f"{match['file']} has no seed {seed} (it has {document['seeds']})")
        if kind == "table":
            link = Path(os.path.relpath(file, page.parent)).as_posix()
            body = results_table(document, seed, match["file"], link)
        elif kind == "task-types":
            body = task_types_table(document, seed)
        elif kind == "loops":
            body = loops_table(document, seed)
        else:
            body = report_lines(document, seed, across=kind == "lines")
        return match["open"] + body + match["close"]

    return BLOCK.sub(render, text)


def results_table(document: dict[str, Any], seed: int, file: str, link: str) -> str:
    """Markdown: per model, seed ``seed``'s success and the spread across the file's seeds;
    per paired difference, the seed's and the mean across seeds with its standard error."""
    seeds = document["seeds"]
    several_envs = len({row["env"] for row in document["rows"]}) > 1
    ours = {(record_label(r), r["env"]): r for r in document["rows"] if r["seed"] == seed}
    span = (
        f"seeds {seeds[0]}–{seeds[-1]}"
        if seeds == list(range(seeds[0], seeds[-1] + 1))
        else ("seeds " + ", ".join(map(str, seeds)))
    )
    from agentcli.cli.report import score_reported

    scored = any(score_reported(row["env"]) for row in document["rows"])
    score_column = f" mean score, seed {seed} |" if scored else ""
    lines = [
        f"| model | held-out success, seed {seed} |{score_column} mean over {span} | sd"
        " | min – max |",
        "|---|---|---|---|---|" + ("---|" if scored else ""),
    ]
    for spread in document["across_seeds"]["rows"]:
        label, env = record_label(spread), spread["env"]
        row = ours[(label, env)]
        name = model_label(label) + (f" ({env})" if several_envs else "")
        score = f" {row['mean_score']:.3f} ± {row['score_se']:.3f} |" if scored else ""
        lines.append(
            f"| {name} | {_percent(row['success_rate'])} ± {_points(row['success_se'])} % |"
            f"{score} {_percent(spread['success_mean'])} % | {_points(spread['success_sd'])}"
            f" | {_percent(spread['success_min'])} – {_percent(spread['success_max'])} % |"
        )
    lines += [
        "",
        f"| paired difference (n = {next(iter(ours.values()))['items']} items) | seed {seed}"
        f" | mean ± standard error across {span} | min – max | ahead in |",
        "|---|---|---|---|---|",
    ]
    mine = {(c["env"], c["model"], c["baseline"]): c for c in document["comparisons"]
            if c["seed"] == seed}  # fmt: skip
    for d in document["across_seeds"]["comparisons"]:
        c = mine[(d["env"], d["model"], d["baseline"])]
        name = f"{model_label(d['model'])} − {model_label(d['baseline'])}" + (
            f" ({d['env']})" if several_envs else ""
        )
        lines.append(
            f"| {name} | {_signed(c['difference'])} ± {_points(c['standard_error'])}"
            f" | {_signed(d['mean'])} ± {_points(d['standard_error'])}"
            f" | {_signed(d['low'])} – {_signed(d['high'])} | {d['ahead']} of {d['seeds']} |"
        )
    timings = document["timings"]
    machine = timings["machine"]
    seconds = {s["seed"]: s for s in timings["seeds"]}[seed]
    where = "; ".join(part for part in (machine.get("cpu"), machine["platform"]) if part)
    lines += [
        "",
        f"From [{file}]({link}): measured on {machine['cpus']} CPU cores ({where}); seed {seed}'s"
        f" stages took {_minutes(seconds['seconds'])} at a mean load average of"
        f" {seconds['load_average']}.",
        "",
    ]
    return "\n".join(lines)


def task_types_table(document: dict[str, Any], seed: int) -> str:
    """Markdown: seed ``seed``'s success per task type (a line) and model (a column), with its
    standard error and the type's items."""
    typed = [t for t in document["task_types"] if t["seed"] == seed]
    models = list(dict.fromkeys(record_label(t) for t in typed))
    cells = {(t["task_type"], record_label(t)): t for t in typed}
    lines = [
        "| task type | " + " | ".join(model_label(model) for model in models) + " |",
        "|---|" + "---|" * len(models),
    ]
    for task_type in dict.fromkeys(t["task_type"] for t in typed):
        shown = [cells[(task_type, model)] for model in models]
        lines.append(
            f"| {task_type} | "
            + " | ".join(
                f"{_percent(t['success_rate'])} ± {_points(t['success_se'])} % ({t['items']})"
                for t in shown
            )
            + " |"
        )
    return "\n".join(lines) + "\n"


def loops_table(document: dict[str, Any], seed: int) -> str:
    """Markdown: per model (a line) and seed (a column, seed ``seed``'s first), the items its
    episodes ran out of rounds on in a loop, and in brackets those stuck repeating an action
    that changed nothing; ``–`` where the eval did not count them."""
    seeds = [seed, *(other for other in document["seeds"] if other != seed)]
    several_envs = len({row["env"] for row in document["rows"]}) > 1
    rows = {(record_label(r), r["env"], r["seed"]): r for r in document["rows"]}
    lines = [
        "| model | " + " | ".join(f"seed {s}" for s in seeds) + " |",
        "|---|" + "---|" * len(seeds),
    ]
    for label, env in dict.fromkeys((record_label(r), r["env"]) for r in document["rows"]):
        name = model_label(label) + (f" ({env})" if several_envs else "")
        cells = [rows.get((label, env, s)) for s in seeds]
        lines.append(
            f"| {name} | "
            + " | ".join(
                "–"
                if row is None or row.get("looped") is None
                else f"{row['looped']} ({row['stuck']})"
                for row in cells
            )
            + " |"
        )
    return "\n".join(lines) + "\n"


def report_lines(document: dict[str, Any], seed: int, *, across: bool) -> str:
    """The paired comparisons as `agentgym report` prints them: seed ``seed``'s, or (``across``)
    the lines across the seeds; as a code block."""
    from agentcli.cli.report import across_seeds_line, comparison_line
    from agentcli.compare import Comparison
    from agentcli.iterate.seeds import Difference

    if across:
        lines = [
            across_seeds_line(Difference(**d)) for d in document["across_seeds"]["comparisons"]
        ]
    else:
        lines = [
            comparison_line(Comparison(**{k: v for k, v in c.items() if k != "seed"}))
            for c in document["comparisons"]
            if c["seed"] == seed
        ]
    return "```\n" + "\n".join(lines) + "\n```\n"


def _percent(value: float) -> str:
    return f"{100 * value:.1f}"


def _points(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _signed(value: float) -> str:
    return f"{100 * value:+.1f}"


def _minutes(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a results block is stale")
    args = parser.parse_args()
    stale = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = refreshed(text, page)
        if new == text:
            continue
        if args.check:
            stale.append(page)
        else:
            page.write_text(new, encoding="utf-8")
            print(f"wrote {page.relative_to(ROOT)}")
    if stale:
        names = ", ".join(str(page.relative_to(ROOT)) for page in stale)
        sys.exit(f"stale results in {names}: run `.venv/bin/python scripts/results_pages.py`")


if __name__ == "__main__":
    main()
