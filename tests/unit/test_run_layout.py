"""``RunLayout.of_rollout``: the one place a run and iteration are read back from a path."""

from __future__ import annotations

from agentcli.run_layout import RunLayout


def test_a_rollout_in_a_run_names_its_run_and_iteration(tmp_path):
    layout = RunLayout(tmp_path / "runs" / "x")
    assert RunLayout.of_rollout(layout.rollout(3)) == (layout, 3)
    assert RunLayout.of_rollout(layout.rollout(3).parent) == (layout, 3)
    textcraft = layout.env("textcraft")
    assert RunLayout.of_rollout(textcraft.rollout(0)) == (textcraft, 0)


def test_a_rollout_elsewhere_belongs_to_no_run(tmp_path):
    for path in ("student.jsonl", "runs/x/rollout", "runs/x/iterate/rollout", "iter1/eval"):
        assert RunLayout.of_rollout(tmp_path / path) is None
