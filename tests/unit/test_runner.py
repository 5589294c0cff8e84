"""The manifest's decisions, on small real stages: each reads its input file and appends one
output line per input line, resuming from the lines already written, as the real stages do."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from agentcli.errors import UsageError
from agentcli.iterate.runner import (
    DONE,
    FAILED,
    INTERRUPTED,
    PENDING,
    RUNNING,
    Manifest,
    Stage,
    changed_keys,
    run_lock,
    run_stages,
)
from agentcli.resume import fingerprint


class Interrupted(KeyboardInterrupt):
    """Stands for Ctrl-C in the middle of a stage."""


class Pipeline:
    """Three stages over ``root``: source → double → total, counting the calls of each."""

    def __init__(self, root: Path, factor: int = 2, stop_after: int | None = None) -> None:
        self.root = root
        self.calls: dict[str, int] = {}
        self.factor = factor
        self.stop_after = stop_after  # double stops (Interrupted) after writing this many lines

    @property
    def source(self) -> Path:
        return self.root / "source.txt"

    @property
    def doubled(self) -> Path:
        return self.root / "doubled" / "lines.txt"

    @property
    def total(self) -> Path:
        return self.root / "total.txt"

    def stages(self, iteration: int = 0, workers: int = 4) -> list[Stage]:
        def write_source() -> str:
            self._count("source")
            self.source.write_text("".join(f"{n}\n" for n in range(1, 6)))
            return "5 numbers"

        def double() -> str:
            self._count("double")
            self.doubled.parent.mkdir(exist_ok=True)
            done = self.doubled.read_text().splitlines() if self.doubled.exists() else []
            numbers = self.source.read_text().split()
            with self.doubled.open("a") as out:
                for position, number in enumerate(numbers[len(done) :], start=len(done)):
                    if self.stop_after is not None and position == self.stop_after:
                        raise Interrupted
                    out.write(f"{int(number) * self.factor}\n")
            return f"{len(numbers) - len(done)} doubled"

        def add_up() -> str:
            self._count("total")
            self.total.write_text(str(sum(map(int, self.doubled.read_text().split()))))
            return "added up"

        return [
            Stage("source", iteration, {"count": 5}, [], [self.source], write_source),
            Stage(
                "double",
                iteration,
                {"factor": self.factor, "concurrency": workers},
                [self.source],
                [self.doubled.parent],
                double,
            ),
            Stage("total", iteration, {}, [self.doubled.parent], [self.total], add_up),
        ]

    def run(self, **options) -> list:
        return run_stages(self.stages(), Manifest(self.root / "manifest.json"), **options)

    def manifest(self) -> dict:
        return json.loads((self.root / "manifest.json").read_text())

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1


def test_first_run_records_every_stage(tmp_path):
    pipeline = Pipeline(tmp_path)
    outcomes = pipeline.run()
    assert [o.action for o in outcomes] == ["run", "run", "run"]
    assert pipeline.total.read_text() == "30"
    stages = pipeline.manifest()["stages"]
    assert list(stages) == ["iter0/source", "iter0/double", "iter0/total"]
    double = stages["iter0/double"]
    assert double["status"] == DONE
    assert double["config"] == {"factor": 2, "concurrency": 4}
    assert double["inputs"] == {str(pipeline.source): fingerprint(pipeline.source)}
    assert double["outputs"] == {str(pipeline.doubled.parent): fingerprint(pipeline.doubled.parent)}
    assert double["summary"] == "5 doubled"
    assert double["attempts"] == 1 and double["seconds"] >= 0 and double["finished_at"]


def test_rerun_skips_finished_stages(tmp_path):
    pipeline = Pipeline(tmp_path)
    pipeline.run()
    outcomes = Pipeline(tmp_path).run()
    assert [o.action for o in outcomes] == ["skip", "skip", "skip"]
    assert [o.summary for o in outcomes] == ["5 numbers", "5 doubled", "added up"]


def test_the_manifest_lists_the_plan_and_says_which_stage_is_running(tmp_path):
    pipeline = Pipeline(tmp_path)
    stages = pipeline.stages()
    double = stages[1].run
    seen = []
    stages[1].run = lambda: seen.append(pipeline.manifest()["stages"]) or double()
    run_stages(stages, Manifest(tmp_path / "manifest.json"))
    during = seen[0]
    assert during["iter0/double"]["status"] == RUNNING
    assert during["iter0/double"]["finished_at"] is None
    assert during["iter0/total"]["status"] == PENDING


def test_each_stage_is_logged_with_its_place_in_the_plan(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="agentgym.iterate"):
        Pipeline(tmp_path).run()
    assert "stage 1/3 iter0/source: not run yet" in caplog.text
    assert "stage 3/3 iter0/total:" in caplog.text


def test_a_stage_that_raises_is_failed_not_interrupted(tmp_path):
    pipeline = Pipeline(tmp_path)
    stages = pipeline.stages()
    stages[1].run = lambda: 1 / 0
    with pytest.raises(ZeroDivisionError):
        run_stages(stages, Manifest(tmp_path / "manifest.json"))
    assert pipeline.manifest()["stages"]["iter0/double"]["status"] == FAILED


def test_an_interrupted_stage_resumes_and_earlier_ones_are_not_redone(tmp_path):
    with pytest.raises(Interrupted):
        Pipeline(tmp_path, stop_after=3).run()
    broken = Pipeline(tmp_path).manifest()["stages"]["iter0/double"]
    assert broken["status"] == INTERRUPTED and broken["attempts"] == 1
    source_before = fingerprint(tmp_path / "source.txt")

    pipeline = Pipeline(tmp_path)
    outcomes = pipeline.run()
    assert [o.action for o in outcomes] == ["skip", "run", "run"]
    assert pipeline.calls == {"double": 1, "total": 1}
    # resumed, not restarted: it wrote only the two lines left
    assert outcomes[1].summary == "2 doubled"
    assert pipeline.doubled.read_text().split() == ["2", "4", "6", "8", "10"]
    assert fingerprint(tmp_path / "source.txt") == source_before
    assert pipeline.manifest()["stages"]["iter0/double"]["attempts"] == 2


def test_an_interrupted_stage_with_a_changed_config_is_refused_not_resumed(tmp_path):
    """Resuming would mix lines doubled by 2 with lines tripled: refused, or redone with force."""
    with pytest.raises(Interrupted):
        Pipeline(tmp_path, stop_after=3).run()
    with pytest.raises(UsageError, match=r"iter0/double is interrupted, .*\(factor\).*--force"):
        Pipeline(tmp_path, factor=3).run()
    pipeline = Pipeline(tmp_path, factor=3)
    outcomes = pipeline.run(force=True)
    assert outcomes[1].action == "redo"
    assert pipeline.doubled.read_text().split() == ["3", "6", "9", "12", "15"]


def test_a_changed_config_of_a_finished_stage_is_an_error_naming_stage_and_keys(tmp_path):
    Pipeline(tmp_path).run()
    with pytest.raises(UsageError) as error:
        Pipeline(tmp_path, factor=3).run()
    message = str(error.value)
    assert "iter0/double" in message and "(factor)" in message and "--force" in message
    assert "\n" not in message


def test_a_changed_config_is_refused_before_anything_runs(tmp_path):
    Pipeline(tmp_path).run()
    (tmp_path / "source.txt").write_text("7\n")  # the double stage would be redone first
    pipeline = Pipeline(tmp_path)
    stages = pipeline.stages()
    stages[2].config = {"rounding": "up"}
    with pytest.raises(
        UsageError, match=r"iter0/total is done, but its config changed \(rounding\)"
    ):
        run_stages(stages, Manifest(tmp_path / "manifest.json"))
    assert pipeline.calls == {}


def test_operational_settings_are_not_config_changes(tmp_path):
    Pipeline(tmp_path).run()
    pipeline = Pipeline(tmp_path)
    stages = pipeline.stages(workers=16)
    outcomes = run_stages(stages, Manifest(tmp_path / "manifest.json"))
    assert [o.action for o in outcomes] == ["skip", "skip", "skip"]


def test_force_redoes_the_changed_stage_from_scratch_and_what_follows(tmp_path):
    Pipeline(tmp_path).run()
    pipeline = Pipeline(tmp_path, factor=3)
    outcomes = pipeline.run(force=True)
    assert [o.action for o in outcomes] == ["skip", "redo", "redo"]
    # its old output was removed first: a resumable stage would otherwise keep stale lines
    assert pipeline.doubled.read_text().split() == ["3", "6", "9", "12", "15"]
    assert pipeline.total.read_text() == "45"
    assert pipeline.manifest()["stages"]["iter0/double"]["config"]["factor"] == 3


def test_from_stage_redoes_it_and_every_later_stage(tmp_path):
    Pipeline(tmp_path).run()
    pipeline = Pipeline(tmp_path)
    outcomes = pipeline.run(from_stage="double")
    assert [o.action for o in outcomes] == ["skip", "redo", "redo"]
    assert pipeline.calls == {"double": 1, "total": 1}
    with pytest.raises(UsageError, match="no such stage here; the stages: source, double, total"):
        pipeline.run(from_stage="train")


def test_changed_inputs_redo_a_finished_stage(tmp_path):
    Pipeline(tmp_path).run()
    (tmp_path / "source.txt").write_text("7\n")  # as if an earlier stage had been redone
    pipeline = Pipeline(tmp_path)
    outcomes = pipeline.run()
    assert [(o.action, o.reason) for o in outcomes[1:]] == [
        ("redo", "its inputs changed"),
        ("redo", "redo requested"),
    ]
    assert pipeline.total.read_text() == "14"


def test_a_finished_stage_whose_output_is_gone_runs_again(tmp_path):
    Pipeline(tmp_path).run()
    (tmp_path / "total.txt").unlink()
    pipeline = Pipeline(tmp_path)
    assert [o.action for o in pipeline.run()] == ["skip", "skip", "redo"]
    assert pipeline.total.read_text() == "30"


def test_a_directory_fingerprint_follows_any_rewrite(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "weights.bin").write_bytes(b"1234")
    before = fingerprint(folder)
    assert fingerprint(folder) == before
    (folder / "weights.bin").write_bytes(b"12345")
    assert fingerprint(folder) != before
    assert fingerprint(tmp_path / "nothing") is None


def test_changed_keys_are_dotted_and_leave_out_operational_ones():
    old = {"policy": {"temperature": 0.0, "seed": 1}, "concurrency": 8, "limit": 5}
    new = {"policy": {"temperature": 0.7, "seed": 1}, "concurrency": 2, "limit": None}
    assert changed_keys(old, new) == ["limit", "policy.temperature"]
    # a setting this version added, at its empty default: a run of the last version resumes
    assert changed_keys(old, {**old, "policy": {**old["policy"], "args": []}}) == []


def test_a_second_run_on_the_same_directory_stops_at_once(tmp_path):
    busy = pytest.raises(UsageError, match="another agentgym iterate is working on")
    with run_lock(tmp_path / ".lock"), busy, run_lock(tmp_path / ".lock"):
        pass
    with run_lock(tmp_path / ".lock"):  # released with the first holder
        pass


def test_a_file_that_is_not_a_manifest_is_one_line(tmp_path):
    (tmp_path / "manifest.json").write_text("[1, 2]")
    with pytest.raises(UsageError, match="is not an agentgym manifest"):
        Manifest(tmp_path / "manifest.json")


def test_where_training_logs_go_is_no_change_of_what_a_training_makes():
    old = {"hyperparameters": {"report_to": "none", "run_name": None, "project": None}}
    new = {"hyperparameters": {"report_to": "trackio", "run_name": "iter1", "project": "leap"}}
    assert changed_keys(old, new) == []
