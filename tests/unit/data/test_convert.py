"""Converters: AgentGym JSON and LEAP logs ⇄ Episodes, byte for byte; `data convert`."""

from __future__ import annotations

import filecmp
import json
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentcli.cli.data import app
from agentcli.conversation import ACKNOWLEDGEMENT
from agentcli.data.agentgym import agentgym_text, read_agentgym
from agentcli.data.convert import convert, detect_format
from agentcli.data.jsonl import read_records
from agentcli.data.leap import read_leap
from agentcli.errors import UsageError
from agentcli.records import Episode, Step

FIXTURES = Path(__file__).parents[2] / "fixtures"
AGENTGYM = FIXTURES / "agentgym_textcraft.json"
LEAP = FIXTURES / "leap_textcraft"


def _same_tree(first: Path, second: Path) -> bool:
    comparison = filecmp.dircmp(first, second)
    if comparison.left_only or comparison.right_only or comparison.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(first, second, comparison.common_files, shallow=False)
    return (
        not mismatch
        and not errors
        and all(_same_tree(first / name, second / name) for name in comparison.common_dirs)
    )


def test_agentgym_round_trips_byte_for_byte(tmp_path):
    assert agentgym_text(read_agentgym(AGENTGYM)) == AGENTGYM.read_text(encoding="utf-8")
    # and through an episodes file on disk, as a user would do it
    convert(AGENTGYM, tmp_path / "episodes.jsonl", "episodes")
    convert(tmp_path / "episodes.jsonl", tmp_path / "back.json", "agentgym")
    assert (tmp_path / "back.json").read_bytes() == AGENTGYM.read_bytes()


def test_agentgym_records_become_real_episodes():
    planned, played, confused, unplayed = read_agentgym(AGENTGYM)
    assert planned.item_id == "textcraft_0" and planned.env == "textcraft"
    assert planned.instruction.startswith("You craft Minecraft items")
    assert [step.action for step in planned.steps] == [
        "get 1 oak log", "craft 4 oak planks using 1 oak log", "craft 4 stick using 2 oak planks",
    ]  # fmt: skip
    assert planned.steps[0].reason.startswith("I need planks")
    assert planned.steps[1].observation == "Got 1 oak log"
    assert planned.final_observation is None and planned.reward == 0.0
    # an evaluator record: reward and success, and the env's answer to the last action
    assert played.reward == 1.0 and played.success and played.steps[-1].done
    assert played.final_observation == "Crafted 1 minecraft:oak_sign"
    # AgentGym's own trajectory turns are what the agentgym style writes: only its key order
    # is kept aside
    assert planned.meta == {"agentgym": {"record": {"keys": ["item_id", "conversations"]}}}
    assert confused.steps[0].action == "inventory"  # a bare reply is the action, as in AgentGym
    assert unplayed.n_steps == 0 and unplayed.instruction == ""


def test_episodes_write_as_agentgym_trains_on_them():
    episode = Episode(
        item_id="textcraft_2", env="textcraft", instruction="Craft.", reward=1.0, success=True,
        steps=[Step(observation="Goal: craft stick.", reason="r", action="get 1 oak log")],
    )  # fmt: skip
    (record,) = json.loads(agentgym_text([episode]))
    assert record == {
        "item_id": "textcraft_2",
        "conversations": [
            {"from": "human", "loss": None, "value": "Craft."},
            {"from": "gpt", "loss": False, "value": ACKNOWLEDGEMENT},
            {"from": "human", "loss": None, "value": "Goal: craft stick."},
            {"from": "gpt", "loss": True, "value": "Thought:\nr\n\nAction:\nget 1 oak log"},
        ],
        "reward": 1.0,
        "success": 1,
    }
    assert agentgym_text([episode]).startswith('[\n    {\n        "item_id"')  # indent 4
    # an episode played in our wording is written as it was shown
    native = episode.model_copy(update={"meta": {"prompt": "native"}})
    (record,) = json.loads(agentgym_text([native]))
    assert record["conversations"][-1]["value"] == "Thought: r\nAction: get 1 oak log"


def test_textcraft_records_take_our_id_of_the_goal_they_state(tmp_path):
    """AgentGym numbers textcraft goals in its machine's directory listing order; the goal a
    record's first observation states is the same everywhere. Writing back restores its id."""
    from agentcli.envs.registry import SPECS
    from agentcli.envs.textcraft.session import goal_index

    episodes = read_agentgym(AGENTGYM, SPECS.get)
    # stick, oak sign, bowl; the last record holds no conversation, so no goal
    assert [e.item_id for e in episodes] == [
        "textcraft_103",
        "textcraft_313",
        f"textcraft_{goal_index('bowl')}",
        "textcraft_31",
    ]
    assert agentgym_text(episodes) == AGENTGYM.read_text(encoding="utf-8")
    convert(AGENTGYM, tmp_path / "episodes.jsonl", "episodes", env_facts=SPECS.get)
    assert read_records(tmp_path / "episodes.jsonl", Episode)[0].item_id == "textcraft_103"
    convert(tmp_path / "episodes.jsonl", tmp_path / "back.json", "agentgym")
    assert (tmp_path / "back.json").read_bytes() == AGENTGYM.read_bytes()


def test_a_record_without_success_succeeds_at_its_envs_full_score(tmp_path):
    """sciworld scores 0-100: its spec says so, and the reader is handed the specs."""
    from agentcli.envs.registry import SPECS

    source = tmp_path / "sciworld.json"
    turns = [{"from": "human", "loss": None, "value": "Do the task."}]
    records = [
        {"item_id": "sciworld_3", "conversations": turns, "reward": reward} for reward in (100, 1)
    ]
    source.write_text(json.dumps(records, indent=4, ensure_ascii=False), encoding="utf-8")
    assert [e.success for e in read_agentgym(source, SPECS.get)] == [True, False]
    assert [e.success for e in read_agentgym(source)] == [True, True]  # AgentGym's reward == 1


def test_other_json_layouts_round_trip_too(tmp_path):
    data = json.loads(AGENTGYM.read_text(encoding="utf-8"))
    for layout in ({"indent": 2, "ensure_ascii": True}, {"indent": None}, {"indent": "\t"}):
        source = tmp_path / "layout.json"
        source.write_text(json.dumps(data, **layout) + "\n", encoding="utf-8")
        assert agentgym_text(read_agentgym(source)) == source.read_text(encoding="utf-8")


def test_leap_round_trips_byte_for_byte(tmp_path):
    convert(LEAP, tmp_path / "episodes.jsonl", "episodes", env="textcraft")
    convert(tmp_path / "episodes.jsonl", tmp_path / "leap", "leap")
    assert _same_tree(LEAP, tmp_path / "leap")


def test_leap_logs_become_real_episodes():
    first, second, other_model = read_leap(LEAP, env="textcraft")
    assert (first.item_id, first.reward, first.success, first.n_steps) == (
        "textcraft_0",
        1.0,
        True,
        3,
    )
    assert first.meta["model"] == "gpt-4o" and other_model.meta["model"] == "llama-3-8b"
    assert first.steps[0].candidate_actions == ["get 1 oak log", "inventory"]
    assert first.steps[0].reason == "Sticks come from planks, and planks from an oak log."
    assert first.steps[-1].done and not second.steps[-1].done
    assert second.steps[0].reason == "I need 7 planks → 2 logs."
    assert other_model.meta["leap"]["path"] == "llama-3-8b/0.json"


def test_episodes_round_trip_through_leap(tmp_path):
    convert(AGENTGYM, tmp_path / "episodes.jsonl", "episodes")
    convert(tmp_path / "episodes.jsonl", tmp_path / "leap", "leap")
    assert sorted(p.name for p in (tmp_path / "leap").iterdir()) == [
        "0.json", "12.json", "31.json", "7.json", "summary.csv",
    ]  # fmt: skip
    summary = (tmp_path / "leap" / "summary.csv").read_text()
    assert summary.splitlines()[:3] == [
        "env_idx,model_id,num_actions,score", "0,,3,0.0", "7,,5,1.0",
    ]  # fmt: skip
    convert(tmp_path / "leap", tmp_path / "again.jsonl", "episodes")
    assert (tmp_path / "again.jsonl").read_bytes() == (tmp_path / "episodes.jsonl").read_bytes()
    convert(tmp_path / "leap", tmp_path / "back.json", "agentgym")
    assert (tmp_path / "back.json").read_bytes() == AGENTGYM.read_bytes()


def test_unlisted_logs_are_left_out_with_a_warning(tmp_path, caplog):
    convert(AGENTGYM, tmp_path / "leap", "leap")
    (tmp_path / "leap" / "99.json").write_text("{}")
    with caplog.at_level(logging.WARNING):
        assert len(read_leap(tmp_path / "leap")) == 4
    assert "not listed in summary.csv were left out: 99.json" in caplog.text


def test_leap_logs_without_env_need_one(tmp_path):
    with pytest.raises(UsageError, match="does not name its environment — pass --env NAME"):
        read_leap(LEAP)
    with pytest.raises(UsageError, match="--env applies to LEAP log directories only"):
        convert(AGENTGYM, tmp_path / "out.jsonl", "episodes", env="textcraft")


def test_detect_format(tmp_path):
    assert detect_format(AGENTGYM) == "agentgym"
    assert detect_format(LEAP) == "leap"
    (tmp_path / "episodes.txt").write_text('{"item_id": "textcraft_0"}\n')
    assert detect_format(tmp_path / "episodes.txt") == "episodes"
    (tmp_path / "log.json").write_text('{"trajectory": []}')
    with pytest.raises(UsageError, match="cannot tell its format"):
        detect_format(tmp_path / "log.json")
    with pytest.raises(FileNotFoundError):
        detect_format(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"item_id": "textcraft"}, "expected '<env>_<index>'"),
        ({"conversations": []}, "expected an object with an 'item_id'"),
        (
            {"item_id": "textcraft_1", "conversations": [{"from": "gpt", "value": "hi"}]},
            "turn 0: expected a 'human' turn",
        ),
    ],
)
def test_malformed_agentgym_records_are_one_line_errors(tmp_path, record, problem):
    source = tmp_path / "bad.json"
    source.write_text(json.dumps([record]))
    with pytest.raises(UsageError, match=problem) as caught:
        read_agentgym(source)
    assert f"{source} record 0" in str(caught.value) and "\n" not in str(caught.value)


def test_leap_output_never_overwrites_a_directory(tmp_path):
    (tmp_path / "leap").mkdir()
    (tmp_path / "leap" / "keep.txt").write_text("mine")
    with pytest.raises(UsageError, match="already exists"):
        convert(AGENTGYM, tmp_path / "leap", "leap")
    assert [p.name for p in tmp_path.iterdir()] == ["leap"]  # no staging left behind


def test_convert_command(tmp_path):
    target = tmp_path / "episodes.jsonl"
    result = CliRunner().invoke(
        app, ["convert", str(LEAP), str(target), "--to", "episodes", "--env", "textcraft"]
    )
    assert result.exit_code == 0, result.output
    assert "3 episodes" in result.output and "(leap)" in result.output
    assert [e.item_id for e in read_records(target, Episode)] == [
        "textcraft_0", "textcraft_7", "textcraft_0",
    ]  # fmt: skip
    result = CliRunner().invoke(app, ["convert", str(LEAP), str(target), "--to", "csv"])
    assert result.exit_code == 2 and "--to" in result.output


def test_a_target_is_never_replaced_unasked_nor_of_another_format(tmp_path):
    episodes = tmp_path / "mydemos.jsonl"
    convert(AGENTGYM, episodes, "episodes")
    kept = episodes.read_bytes()
    with pytest.raises(UsageError, match="mydemos.jsonl exists: pass --overwrite"):
        convert(AGENTGYM, episodes, "episodes")
    with pytest.raises(UsageError, match="--to agentgym writes a .json file, not mydemos.jsonl"):
        convert(AGENTGYM, episodes, "agentgym")  # the swapped arguments of the issue
    with pytest.raises(UsageError, match="--to leap writes a directory"):
        convert(AGENTGYM, tmp_path / "leap.json", "leap")
    assert episodes.read_bytes() == kept
    convert(episodes, tmp_path / "back.json", "agentgym")
    convert(tmp_path / "back.json", episodes, "episodes", overwrite=True)
    assert episodes.read_bytes() == kept


def test_the_command_names_an_unknown_env(tmp_path):
    result = CliRunner().invoke(
        app,
        ["convert", str(LEAP), str(tmp_path / "e.jsonl"), "--to", "episodes", "--env", "alfwrld"],
    )
    assert "did you mean 'alfworld'" in str(result.exception)
    assert not (tmp_path / "e.jsonl").exists()
