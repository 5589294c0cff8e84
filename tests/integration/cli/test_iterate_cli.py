"""``iterate`` and ``report`` as a user meets them: the resolved config, one-line errors."""

from __future__ import annotations

from tests.support.cli import agentgym


def write_config(tmp_path):
    path = tmp_path / "iterate.yaml"
    path.write_text(
        f"run: {tmp_path / 'run'}\nenvs: [textcraft]\nmodel: models/tiny\n"
        "train: {hyperparameters: {num_train_epochs: 1}}\n"
        "iterations: {1: {train: {hyperparameters: {num_train_epochs: 2}}}}\n"
    )
    return path


def test_print_config_shows_each_iteration_resolved(tmp_path):
    result = agentgym(
        "iterate", "--config", str(write_config(tmp_path)), "--iters", "0-1",
        "eval.limit=5", "--print-config",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    zero, one = result.stdout.split("# seed 0, iteration 1\n")  # the config's seed
    assert zero.startswith("# seed 0, iteration 0\n")
    assert "iter: 0" in zero and "epochs: 1.0" in zero
    assert "iter: 1" in one and "epochs: 2.0" in one
    assert "limit: 5" in zero and "limit: 5" in one
    assert not (tmp_path / "run").exists()  # printing runs nothing


def test_iterate_without_iterations_is_one_line_and_exit_2(tmp_path):
    result = agentgym("iterate", "--config", str(write_config(tmp_path)))
    assert result.returncode == 2
    assert "--iter N or --iters A-B" in result.stderr
    assert result.stderr.strip().count("\n") == 0


def test_report_of_a_directory_that_is_no_run_is_one_line(tmp_path):
    result = agentgym("report", str(tmp_path))
    assert result.returncode == 2
    assert "holds no seed's run (seed<N>/manifest.json)" in result.stderr
    assert result.stderr.strip().count("\n") == 0
