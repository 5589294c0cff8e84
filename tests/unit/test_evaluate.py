"""Metrics over episodes: each rate and mean with its standard error; summary.csv keeps its
columns (new ones last) and metrics.json names what was evaluated."""

from __future__ import annotations

import csv
import json

import pytest

from agentcli.conversation import invalid_reply_observation
from agentcli.evaluate import compute_metrics, episode_loop_period, evaluated, write_metrics
from agentcli.records import Episode, Step
from agentcli.resume import settings_digest

# the columns summary.csv had before it had standard errors: readers of them keep working
EARLIER_COLUMNS = ["env", "category", "episodes", "success_rate", "mean_score", "mean_steps",
                   "errors"]  # fmt: skip
SETTINGS = {
    "env": "textcraft", "split": "test", "max_rounds": 30, "view": {"reasons": True},
    "policy": {"kind": "local", "model": "runs/x/iter1/model", "weights": "ab" * 32,
               "model_name": None, "max_new_tokens": 128, "temperature": 0.0, "seed": 0},
}  # fmt: skip


def episodes(rewards):
    return [
        Episode(item_id=f"textcraft_{i}", env="textcraft", instruction="", reward=reward,
                success=reward == 1.0, n_steps=0)
        for i, reward in enumerate(rewards)
    ]  # fmt: skip


def test_success_and_score_come_with_their_standard_errors():
    [row] = compute_metrics(episodes([1.0, 0.0, 0.5, 0.5]))
    assert (row.success_rate, row.mean_score) == (0.25, 0.5)
    # success: binomial √(p(1-p)/n) = √(0.25 · 0.75 / 4)
    assert row.success_se == pytest.approx((0.25 * 0.75 / 4) ** 0.5)
    # score: deviations 0.5, -0.5, 0, 0 → deviation √(0.5/4), over √4
    assert row.score_se == pytest.approx((0.5 / 4) ** 0.5 / 2)


def test_metrics_do_not_depend_on_the_order_episodes_finished_in():
    """Concurrent episodes finish in another order each run; the same episodes must give the
    same metrics to the last digit, or a rerun of the same seed reports another mean score."""
    rewards = [0.1, 0.2, 0.3, 1.0, 0.7, 1e-3, 0.9] * 20
    forward = compute_metrics(episodes(rewards))
    shuffled = sorted(episodes(rewards), key=lambda episode: (episode.reward, episode.item_id))
    assert sum(rewards) != sum(sorted(rewards))  # a plain float sum would differ here
    assert compute_metrics(shuffled) == forward


def test_summary_csv_adds_the_errors_after_its_earlier_columns(tmp_path):
    write_metrics(compute_metrics(episodes([1.0, 0.0])), tmp_path, evaluated(SETTINGS))
    with (tmp_path / "summary.csv").open() as file:
        [line] = list(csv.DictReader(file))
    assert list(line) == [*EARLIER_COLUMNS, "success_se", "score_se"]
    # √(0.5 · 0.5 / 2), rounded to 4 places as the other columns
    assert (line["success_rate"], line["success_se"]) == ("0.5", "0.3536")


def test_metrics_json_names_the_model_its_weights_and_the_settings(tmp_path):
    write_metrics(compute_metrics(episodes([1.0, 0.0])), tmp_path, evaluated(SETTINGS))
    [row] = json.loads((tmp_path / "metrics.json").read_text())
    assert row["success_se"] == row["score_se"] == pytest.approx(0.125**0.5)
    assert row["split"] == "test" and row["policy"] == "local"
    assert row["model"] == "runs/x/iter1/model" and row["weights_digest"] == "ab" * 32
    assert row["settings_digest"] == settings_digest(SETTINGS)
    endpoint = {**SETTINGS, "policy": {**SETTINGS["policy"], "model": None, "weights": None,
                                       "model_name": "gpt-4o-mini"}}  # fmt: skip
    assert evaluated(endpoint)["model"] == "gpt-4o-mini"
    assert evaluated(endpoint)["settings_digest"] != row["settings_digest"]


SEARCH_PAGE = "WebShop [SEP] Instruction: [SEP] i need socks [SEP] Search"
RESULTS_PAGE = (
    "Instruction: [SEP] i need socks [SEP] Back to Search [SEP] Page 1 (Total results: 1)"
    " [SEP] Next > [SEP] B01ABCDEFG [SEP] Cozy Wool Hiking Socks [SEP] $10.99"
)


def test_metrics_json_counts_how_episodes_ended_and_each_kind_of_step(tmp_path):
    """Webshop sorts its steps into kinds: metrics.json counts them, and how the episodes
    ended; summary.csv keeps its columns. A step after a reply with no action shows the
    notice that answered it: its action was taken on the page before."""
    notice = invalid_reply_observation("no 'Action:' line in the reply")
    opened = [(SEARCH_PAGE, "search[socks]"), (RESULTS_PAGE, ""), (notice, "click[b01abcdefg]")]
    wandered = [(SEARCH_PAGE, "click[socks]"), (SEARCH_PAGE, "search[socks]"),
                (RESULTS_PAGE, "click[next >]")]  # fmt: skip
    played = [
        Episode(item_id=f"webshop_{i}", env="webshop", instruction="", reward=reward,
                success=reward == 1.0, meta={"end_reason": end},
                steps=[Step(observation=page, action=action) for page, action in steps])
        for i, (steps, reward, end) in enumerate(
            [(opened, 1.0, "done"), (wandered, 0.0, "max_rounds")]
        )
    ]  # fmt: skip
    write_metrics(compute_metrics(played), tmp_path, evaluated(SETTINGS))
    [row] = json.loads((tmp_path / "metrics.json").read_text())
    assert row["ends"] == {"done": 1, "max_rounds": 1, "context_exceeded": 0, "error": 0}
    assert row["action_kinds"] == {
        "search": 2, "result": 1, "option": 0, "buy": 0, "navigate": 1, "invalid": 2,
    }  # fmt: skip
    with (tmp_path / "summary.csv").open() as file:
        assert list(next(csv.DictReader(file))) == [*EARLIER_COLUMNS, "success_se", "score_se"]
    # an env that sorts no actions: no kinds, its ends all the same
    [textcraft] = compute_metrics(episodes([1.0]))
    assert textcraft.action_kinds == {} and textcraft.ends["unrecorded"] == 1


def test_metrics_json_counts_the_episodes_out_of_rounds_in_a_loop(tmp_path):
    """An episode out of rounds whose last action was taken in a state where it had taken it
    before is looping, stuck where that action changed nothing (the BabyAI student repeating
    `pick up` on a ball out of sight). One that wandered through new states, or that repeated
    itself and then finished, is not."""

    def played(i, steps, end):
        return Episode(
            item_id=f"textcraft_{i}", env="textcraft", instruction="", meta={"end_reason": end},
            steps=[Step(observation=seen, action=action) for seen, action in steps],
        )  # fmt: skip

    stuck = [
        ("a ball behind you", "turn left"),
        ("a ball ahead", "go to it"),
        ("a wall ahead", "pick up ball"),
        ("a wall ahead", "pick up ball"),
    ]
    cycling = [
        ("at the counter", "go to table"),
        ("at the table", "go to counter"),
        ("at the counter", "go to table"),
    ]
    wandering = [
        ("at the counter", "go to table"),
        ("at the table", "go to shelf"),
        ("at the shelf", "go to counter"),
        ("at the counter", "open it"),
    ]
    finished = [("a wall ahead", "turn left"), ("a wall ahead", "turn left")]
    [row] = compute_metrics(
        [played(0, stuck, "max_rounds"), played(1, cycling, "max_rounds"),
         played(2, wandering, "max_rounds"), played(3, finished, "done"),
         played(4, [], "max_rounds")]
    )  # fmt: skip
    assert (row.looped, row.stuck) == (2, 1)
    periods = [episode_loop_period(played(0, steps, "max_rounds")) for steps in (stuck, cycling)]
    assert periods == [1, 2]
    write_metrics([row], tmp_path, evaluated(SETTINGS))
    [written] = json.loads((tmp_path / "metrics.json").read_text())
    assert (written["looped"], written["stuck"]) == (2, 1)
    with (tmp_path / "summary.csv").open() as file:
        assert {"looped", "stuck"}.isdisjoint(next(csv.DictReader(file)))
