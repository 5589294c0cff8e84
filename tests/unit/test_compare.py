"""Two eval directories compared item by item (``agentgym report A B``), numbers by hand."""

from __future__ import annotations

import pytest

from agentcli.compare import Outcome, compare_evals, outcomes, paired
from agentcli.data.jsonl import append_records, write_records
from agentcli.errors import UsageError
from agentcli.records import Episode

# item index → success; items 1-5 are shared
A = {1: True, 2: False, 3: True, 4: False, 5: True, 9: True}
B = {1: False, 2: False, 3: True, 4: True, 5: False, 7: False}


def evaluated(folder, successes, *, env="textcraft", split="test"):
    episodes = [
        Episode(item_id=f"{env}_{i}", env=env, split=split, instruction="", success=won,
                reward=float(won), n_steps=0)
        for i, won in successes.items()
    ]  # fmt: skip
    write_records(folder / "episodes.jsonl", episodes)
    return folder


def test_the_difference_is_paired_over_the_shared_items(tmp_path):
    [found] = compare_evals(evaluated(tmp_path / "a", A), evaluated(tmp_path / "b", B))
    assert (found.env, found.split, found.items) == ("textcraft", "test", 5)
    # differences 1, 0, 0, -1, 1: mean 0.2; squared deviations .64 .04 .04 1.44 .64 sum
    # to 2.8, over 4: 0.7, so the sample deviation is √0.7 and the error √0.7 / √5
    assert found.difference == pytest.approx(0.2)
    assert found.standard_error == pytest.approx(0.7**0.5 / 5**0.5)
    assert (found.wins, found.losses, found.ties) == (2, 1, 2)
    assert (found.model, found.baseline) == (str(tmp_path / "a"), str(tmp_path / "b"))


def test_an_episodes_file_counts_its_last_episode_of_an_item(tmp_path):
    a = evaluated(tmp_path / "a", A)
    b = evaluated(tmp_path / "b", B)
    # item 4 played again after an error: now a win for A as well, so a tie
    again = Episode(item_id="textcraft_4", env="textcraft", split="test", instruction="",
                    success=True, n_steps=0)  # fmt: skip
    append_records(a / "episodes.jsonl", [again])
    [found] = compare_evals(a / "episodes.jsonl", b)
    assert (found.wins, found.losses, found.ties) == (2, 0, 3)
    assert found.difference == pytest.approx(0.4)


def test_several_envs_are_compared_each_on_its_own(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path, first, second in ((a, A, {0: True, 1: True}), (b, B, {0: False, 1: True})):
        episodes = [
            Episode(item_id=f"{env}_{i}", env=env, split="test", instruction="", success=won,
                    n_steps=0)
            for env, wins in (("textcraft", first), ("babyai", second))
            for i, won in wins.items()
        ]  # fmt: skip
        write_records(path, episodes)
    found = {c.env: c for c in compare_evals(a, b)}
    assert found["babyai"].items == 2 and found["babyai"].difference == pytest.approx(0.5)
    assert found["textcraft"].items == 5


@pytest.mark.parametrize(
    ("b_items", "b_options", "message"),
    [
        ({7: True, 8: False}, {}, "share no textcraft item"),
        ({5: True, 8: False}, {}, "share only one textcraft item"),
        (B, {"env": "babyai"}, "evaluated textcraft, .* babyai: compare two evals of the same"),
        (B, {"split": "train"}, "textcraft's test split, .* its train split"),
    ],
)
def test_evals_that_cannot_be_paired_are_refused_in_one_line(tmp_path, b_items, b_options, message):
    a = evaluated(tmp_path / "a", A)
    b = evaluated(tmp_path / "b", b_items, **b_options)
    with pytest.raises(UsageError, match=message) as error:
        compare_evals(a, b)
    assert "\n" not in str(error.value)


def test_a_directory_without_episodes_is_refused_with_what_to_pass(tmp_path):
    a = evaluated(tmp_path / "a", A)
    with pytest.raises(UsageError, match="holds no episodes.jsonl: pass an eval's output"):
        compare_evals(a, tmp_path)


def test_fewer_than_two_shared_items_pair_to_nothing():
    won, lost = Outcome(1.0, 1.0), Outcome(0.0, 0.0)
    assert paired("textcraft", "1", "0", {"x_1": won}, {"x_1": lost}) is None
    assert paired("textcraft", "1", "0", {"x_1": won, "x_2": won}, {"x_3": lost}) is None


def test_graded_scores_are_paired_beside_success():
    """webshop: no item won by either side, yet the model buys closer to the goal."""
    scores = {"a": [0.5, 0.75, 0.25], "b": [0.25, 0.75, 0.0]}
    sides = [
        outcomes(Episode(item_id=f"webshop_{i}", env="webshop", instruction="", reward=score,
                         n_steps=0) for i, score in enumerate(scores[side]))
        for side in ("a", "b")
    ]  # fmt: skip
    found = paired("webshop", "1", "0", *sides)
    assert found is not None and (found.difference, found.wins, found.ties) == (0.0, 0, 3)
    # score differences 0.25, 0, 0.25: mean 1/6, sample deviation √(1/48), over √3
    assert found.score_difference == pytest.approx(1 / 6)
    assert found.score_standard_error == pytest.approx((1 / 48) ** 0.5 / 3**0.5)


def test_report_prints_the_score_pairing_where_the_env_reports_scores(tmp_path):
    from tests.support.cli import agentgym

    for side, rewards in (("a", [0.5, 0.75, 0.25]), ("b", [0.25, 0.75, 0.0])):
        write_records(tmp_path / side / "episodes.jsonl", [
            Episode(item_id=f"webshop_{i}", env="webshop", split="test", instruction="",
                    reward=reward, n_steps=0) for i, reward in enumerate(rewards)
        ])  # fmt: skip
    printed = agentgym("report", str(tmp_path / "a"), str(tmp_path / "b"))
    assert printed.returncode == 0, printed.stderr
    assert "(paired over 3 items: 0 wins, 0 losses, 3 ties); score +0.167 ± 0.083" in printed.stdout
    plain = agentgym("report", str(evaluated(tmp_path / "c", A)), str(evaluated(tmp_path / "d", B)))
    assert plain.returncode == 0 and plain.stdout.rstrip().endswith("2 ties)")  # success alone
