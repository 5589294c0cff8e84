"""A measured number on a page is one its result file holds: every results block of README.md
and docs/ is what scripts/results_pages.py renders from the file it names, and a number
changed by hand (or a file re-measured without the pages) fails."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

from tests.support.docs import ROOT

SCRIPT = ROOT / "scripts" / "results_pages.py"


def results_pages():
    spec = importlib.util.spec_from_file_location("results_pages", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_results_block_is_its_file_rendered():
    check = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=120
    )
    assert check.returncode == 0, check.stderr
    # the quickstart's table is on both pages that promise it, from the committed sweep
    for page in ("README.md", "docs/quickstart.md"):
        text = (ROOT / page).read_text()
        assert "<!-- results docs/results/quickstart.json seed=0 -->\n| model |" in text, page


def test_the_alfworld_page_shows_its_configs_300_test_games_per_model_and_task_type():
    import json

    document = json.loads((ROOT / "docs" / "results" / "alfworld.json").read_text())
    assert {(r["env"], r["split"], r["items"]) for r in document["rows"]} == {
        ("alfworld", "test", 300)
    }
    assert len({t["task_type"] for t in document["task_types"]}) == 6
    page = (ROOT / "docs" / "environments" / "alfworld.md").read_text()
    block = "<!-- results docs/results/alfworld.json seed=0 task-types -->\n"
    assert block + "| task type | iteration 0 | iteration 1 | control |" in page
    assert "| pick_and_place_simple | " in page.split(block)[1]


def test_a_number_changed_by_hand_is_stale():
    module = results_pages()
    readme = ROOT / "README.md"
    text = readme.read_text()
    block = module.BLOCK.search(text)
    assert block is not None
    number = re.search(r"\d+\.\d", block["body"])
    assert number is not None
    digit = "1" if number[0][-1] != "1" else "2"
    start = block.start("body") + number.end() - 1
    tampered = text[:start] + digit + text[start + 1 :]
    assert module.refreshed(tampered, readme) == text  # rendering again restores the file's


def test_the_quickstarts_student_is_the_one_its_results_were_measured_with(tmp_path):
    """The student (its tokenizer and initialisation) is what a seed's numbers hang on: a
    change to what builds it (the tokenizer's text, the model's shape, the seeding) moves
    every published result, and must come with the results measured again."""
    import json

    import yaml

    from agentcli.models import build_tiny_model, model_digest

    config = yaml.safe_load((ROOT / "configs" / "quickstart.yaml").read_text())
    results = json.loads((ROOT / "docs" / "results" / "quickstart.json").read_text())
    published = {student["seed"]: student["digest"] for student in results["students"]}
    shape = config["model"]["tiny"]
    built = build_tiny_model(tmp_path / "student", seed=0, **shape)
    assert model_digest(built) == published[0], (
        "the quickstart's student is not the one docs/results/quickstart.json was measured"
        " with: run the sweep again (docs/quickstart.md) and commit its report.json"
    )


def test_the_webshop_page_shows_each_models_score_on_300_test_goals_and_its_paired_score():
    import json

    document = json.loads((ROOT / "docs" / "results" / "webshop.json").read_text())
    assert {(r["env"], r["split"], r["items"]) for r in document["rows"]} == {
        ("webshop", "test", 300)
    }
    page = (ROOT / "docs" / "environments" / "webshop.md").read_text()
    header = "| model | held-out success, seed 0 | mean score, seed 0 |"
    assert "<!-- results docs/results/webshop.json seed=0 -->\n" + header in page
    lines = page.split("<!-- results docs/results/webshop.json seed=0 seed-lines -->")[1]
    assert "webshop: iteration 1 − control: " in lines and "; score +" in lines.split("<!--")[0]


def test_the_rl_page_shows_each_method_from_the_quickstarts_own_students():
    """docs/rl.md's table of methods: every model of configs/quickstart-rl.yaml named by the
    method that trained it, on 300 test items in ≥ 3 seeds, from the students the quickstart's
    results were measured with (the same seed builds the same one)."""
    import json

    document = json.loads((ROOT / "docs" / "results" / "quickstart-rl.json").read_text())
    quickstart = json.loads((ROOT / "docs" / "results" / "quickstart.json").read_text())
    assert len(document["seeds"]) >= 3
    assert {(r["env"], r["split"], r["items"]) for r in document["rows"]} == {
        ("babyai-putnext", "test", 300)
    }
    models = {(r["iteration"], r["control"], r["variant"], r["method"]) for r in document["rows"]}
    assert models == {
        (0, False, None, "sft"), (1, False, None, "sft"), (1, True, None, "sft"),
        (1, False, "dpo", "dpo"), (1, False, "gigpo", "grpo"), (1, False, "grpo", "grpo"),
        (2, False, None, "sft"), (2, False, "gigpo", "grpo"), (2, False, "grpo", "grpo"),
    }  # fmt: skip
    # every eval counted its loops: the quickstart's page shows them
    assert all(r["looped"] is not None and r["stuck"] is not None for r in document["rows"])
    built = {s["seed"]: s["digest"] for s in quickstart["students"]}
    assert all(built[s["seed"]] == s["digest"] for s in document["students"] if s["seed"] in built)
    page = (ROOT / "docs" / "rl.md").read_text()
    assert "<!-- results docs/results/quickstart-rl.json seed=0 -->\n| model |" in page
    assert "| iteration 2 gigpo − iteration 1 |" in page
    assert "| iteration 2 grpo − iteration 1 |" in page
    assert "| iteration 2 gigpo − iteration 2 grpo |" in page  # the config's versus
    loops = "<!-- results docs/results/quickstart-rl.json seed=0 loops -->\n| model | seed 0 |"
    assert loops in (ROOT / "docs" / "quickstart.md").read_text()


def test_the_loops_block_counts_each_models_looped_and_stuck_items_per_seed():
    def row(seed, iteration, control, looped, stuck):
        return {"seed": seed, "iteration": iteration, "control": control, "variant": None,
                "env": "babyai-putnext", "looped": looped, "stuck": stuck}  # fmt: skip

    document = {
        "seeds": [0, 1],
        "rows": [row(0, 0, False, 152, 14), row(0, 1, False, 155, 36), row(0, 1, True, 118, 6),
                 row(1, 0, False, 156, 63), row(1, 1, False, 126, 40),
                 row(1, 1, True, None, None)],  # an eval from before agentgym counted them
    }  # fmt: skip
    assert results_pages().loops_table(document, seed=1) == (
        "| model | seed 1 | seed 0 |\n"
        "|---|---|---|\n"
        "| iteration 0 | 156 (63) | 152 (14) |\n"
        "| iteration 1 | 126 (40) | 155 (36) |\n"
        "| control | – | 118 (6) |\n"
    )
