"""Where each tracker's logs land: the variables transformers' callbacks read, set for one run
and given back after it; a place the user set stays theirs."""

from __future__ import annotations

import os

import pytest

from agentcli.train.config import TrainConfig
from agentcli.train.tracking import tracker_environment, tracker_variables

PLACES = ("TENSORBOARD_LOGGING_DIR", "WANDB_DIR", "WANDB_PROJECT")


def config(**hyperparameters) -> TrainConfig:
    return TrainConfig(method="bc", data="d.json", model="m", out="runs/x/bc",
                       hyperparameters=hyperparameters)  # fmt: skip


@pytest.fixture(autouse=True)
def no_places(monkeypatch):
    for name in PLACES:
        monkeypatch.delenv(name, raising=False)


def test_tensorboard_logs_go_to_a_folder_named_by_the_run():
    named = tracker_variables(config(report_to="tensorboard", run_name="first"))
    assert named == {"TENSORBOARD_LOGGING_DIR": "runs/x/bc/tensorboard/first"}
    unnamed = tracker_variables(config(report_to="tensorboard"))
    assert unnamed == {"TENSORBOARD_LOGGING_DIR": "runs/x/bc/tensorboard"}


def test_wandb_files_go_to_out_and_its_project_is_the_one_given():
    variables = tracker_variables(config(report_to="wandb", project="leap", run_name="first"))
    assert variables == {"WANDB_DIR": "runs/x/bc", "WANDB_PROJECT": "leap"}


def test_trackio_and_no_tracker_need_no_variables():
    # trackio takes its project and run name from the training arguments
    assert tracker_variables(config(report_to="trackio", project="leap", run_name="r")) == {}
    assert tracker_variables(config(project="leap")) == {}


def test_a_place_the_user_set_stays_theirs_but_a_project_given_wins(monkeypatch):
    monkeypatch.setenv("WANDB_DIR", "/scratch/wandb")
    monkeypatch.setenv("WANDB_PROJECT", "theirs")
    assert tracker_variables(config(report_to="wandb", project="leap")) == {"WANDB_PROJECT": "leap"}


def test_the_variables_hold_for_the_run_and_are_given_back_after_it(monkeypatch):
    monkeypatch.setenv("WANDB_PROJECT", "theirs")
    with tracker_environment(config(report_to="wandb", project="leap")):
        assert (os.environ["WANDB_DIR"], os.environ["WANDB_PROJECT"]) == ("runs/x/bc", "leap")
    assert "WANDB_DIR" not in os.environ
    assert os.environ["WANDB_PROJECT"] == "theirs"
