"""Rollouts through real env servers: the oracle, resumption after kill -9, failures."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentcli.common import END_ERROR
from agentcli.conversation import StudentView
from agentcli.data.jsonl import read_records
from agentcli.envs.registry import get_spec
from agentcli.envs.wire.client import EnvClient
from agentcli.envs.wire.launcher import env_servers
from agentcli.errors import AgentGymError, UnreachableError, UsageError
from agentcli.evaluate import compute_metrics
from agentcli.policy import PolicyConfig, local
from agentcli.policy.local import LocalModelPolicy
from agentcli.policy.oracle import OraclePolicy
from agentcli.records import Episode, parse_item_id
from agentcli.rollout import RolloutConfig, execute, run_rollout
from tests.integration.test_env_servers import BABYAI_ITEMS, SCIWORLD_TASK_TYPES
from tests.support.processes import as_from_a_terminal
from tests.support.random_policy import RandomPolicy
from tests.support.servers import app_in_thread, free_port, running_server, slow_proxy

TEXTCRAFT_TRAIN_ITEMS = 435


def _oracle(env: str, out: Path, **options) -> RolloutConfig:
    return RolloutConfig(env=env, out=out, policy=PolicyConfig(kind="oracle"), **options)


@pytest.mark.parametrize(
    ("env", "options"),
    [
        pytest.param("textcraft", {"split": "train", "limit": 50}, id="textcraft-50"),
        pytest.param("babyai", {"items": BABYAI_ITEMS}, id="babyai-20"),  # 19: a key in a box
        pytest.param(
            "babyai",
            {"items": BABYAI_ITEMS, "view": StudentView(prompt="native")},
            id="babyai-20-native",
        ),
        pytest.param(
            "sciworld",
            {"items": SCIWORLD_TASK_TYPES, "concurrency": 5},
            id="sciworld-5",
            marks=(pytest.mark.java, pytest.mark.slow),
        ),
    ],
)
def test_oracle_succeeds_on_at_least_95_percent(env, options, tmp_path):
    if "items" in options:  # run them as an AgentGym eval file would list them
        items = options.pop("items")
        data = tmp_path / "items.json"
        data.write_text(json.dumps([{"item_id": f"{env}_{index}"} for index in items]))
        options["data"] = data
    stats = execute(_oracle(env, tmp_path / "demos.jsonl", **options))
    episodes = read_records(tmp_path / "demos.jsonl", Episode)
    assert stats.finished == len(episodes) == (options.get("limit") or len(items))
    assert stats.success_rate >= 0.95, [e.meta for e in episodes if not e.success]
    assert all(e.steps and e.steps[0].observation for e in episodes)
    assert (tmp_path / "demos.config.yaml").exists()
    [overall] = [row for row in compute_metrics(episodes) if row.category == "all"]
    assert overall.success_rate == stats.success_rate


def test_kill_9_then_rerun_yields_each_item_exactly_once(tmp_path):
    out = tmp_path / "demos.jsonl"
    command = [
        sys.executable, "-m", "agentcli.cli.main", "collect", "--env", "textcraft",
        "--split", "train", "--concurrency", "2", "--out", str(out),
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not out.exists() or out.read_text().count("\n") < 20):
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    written = out.read_text().count("\n")
    assert 20 <= written < TEXTCRAFT_TRAIN_ITEMS, "the kill should land half way"
    rerun = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stderr
    ids = [episode.item_id for episode in read_records(out, Episode)]
    assert len(ids) == len(set(ids)) == TEXTCRAFT_TRAIN_ITEMS
    assert f"{written} already done" in rerun.stdout


def test_unreachable_env_server_stops_the_run_with_one_error(tmp_path):
    config = _oracle(
        "textcraft", tmp_path / "out.jsonl", env_server=[f"http://127.0.0.1:{free_port()}"]
    )
    with pytest.raises(UnreachableError, match="cannot reach the textcraft server"):
        execute(config)


def test_unreachable_model_endpoint_stops_the_run_with_one_error(tmp_path):
    config = RolloutConfig(
        env="textcraft",
        limit=4,
        out=tmp_path / "out.jsonl",
        policy=PolicyConfig(
            kind="openai", base_url=f"http://127.0.0.1:{free_port()}/v1", model_name="m"
        ),
    )
    with pytest.raises(UnreachableError, match="cannot reach the model endpoint"):
        execute(config)
    assert not (tmp_path / "out.jsonl").exists()


def test_tiny_model_rollout_at_concurrency_8_gives_valid_episodes(tiny_model, tmp_path):
    config = RolloutConfig(
        env="textcraft",
        split="train",
        limit=16,
        concurrency=8,
        max_rounds=3,
        out=tmp_path / "rollout",
        policy=PolicyConfig(kind="local", model=tiny_model, max_new_tokens=16),
    )
    stats = execute(config)
    episodes = read_records(tmp_path / "rollout" / "episodes.jsonl", Episode)
    assert stats.finished == 16 and stats.errors == 0
    assert len({episode.item_id for episode in episodes}) == 16
    for episode in episodes:
        assert episode.meta["policy"] == "local"
        assert episode.meta["end_reason"] in {"done", "max_rounds", "context_exceeded"}
        assert episode.n_steps == len(episode.steps) <= 3
        assert episode.meta["completion_tokens"] > 0
    assert (tmp_path / "rollout" / "config.yaml").exists()


def test_env_sessions_open_while_the_model_loads_off_the_event_loop(
    tiny_model, tmp_path, monkeypatch
):
    """execute builds the local policy first: its model loads in a worker thread while the env
    server starts and the sessions open, and the episodes are those of a model loaded first."""
    opened = threading.Event()
    loaded_in: list[threading.Thread] = []
    real_load, real_open = local._load, EnvClient.open

    def load(*args):
        loaded_in.append(threading.current_thread())
        # Loaded where the event loop runs, or before the sessions, it would wait here in vain.
        assert opened.wait(timeout=60), "no env session opened while the model loaded"
        return real_load(*args)

    async def open_session(self, *args, **kwargs):
        session = await real_open(self, *args, **kwargs)
        opened.set()
        return session

    monkeypatch.setattr(local, "_load", load)
    monkeypatch.setattr(EnvClient, "open", open_session)
    settings = {"split": "train", "limit": 8, "concurrency": 4, "max_rounds": 3}
    policy = PolicyConfig(kind="local", model=tiny_model, max_new_tokens=16)
    stats = execute(RolloutConfig(env="textcraft", out=tmp_path / "a", policy=policy, **settings))
    assert stats.finished == 8 and stats.errors == 0
    assert loaded_in and loaded_in[0] is not threading.main_thread()

    spec = get_spec("textcraft")
    loaded_first = LocalModelPolicy(tiny_model, max_new_tokens=16, batch_size=32)
    with env_servers(spec, []) as urls:
        items = [
            parse_item_id(e.item_id)[1]
            for e in read_records(tmp_path / "a" / "episodes.jsonl", Episode)
        ]
        asyncio.run(
            run_rollout(spec, urls, loaded_first, items, tmp_path / "b.jsonl", split="train",
                        concurrency=4, max_rounds=3)
        )  # fmt: skip

    def actions(path: Path) -> dict[str, list[str]]:
        return {e.item_id: [s.action for s in e.steps] for e in read_records(path, Episode)}

    assert actions(tmp_path / "a" / "episodes.jsonl") == actions(tmp_path / "b.jsonl")


class _Watching(OraclePolicy):
    """The oracle, noting every conversation the engine shows it."""

    def __init__(self) -> None:
        self.shown: list[list] = []

    async def act(self, conversation, session):
        self.shown.append(conversation)
        return await super().act(conversation, session)


@pytest.mark.parametrize("instruction", [True, False])
def test_a_history_window_shows_the_policy_its_last_turns_and_records_every_step(
    instruction, tmp_path
):
    spec, policy = get_spec("babyai-putnext"), _Watching()
    with env_servers(spec, []) as urls:
        stats = asyncio.run(
            run_rollout(spec, urls, policy, [1000, 1001], tmp_path / "e.jsonl", split="train",
                        concurrency=2,
                        view=StudentView(history_steps=1, instruction=instruction))
        )  # fmt: skip
    episodes = read_records(tmp_path / "e.jsonl", Episode)
    assert stats.successes == 2 and sum(e.n_steps for e in episodes) == len(policy.shown)
    opening = 2 if instruction else 0  # the instruction and Ok.
    assert max(len(shown) for shown in policy.shown) == opening + 3  # one turn, then now
    observations = {step.observation for e in episodes for step in e.steps}
    for shown in policy.shown:
        assert (shown[0].content == spec.instruction) == instruction
        assert shown[-1].role == "user" and shown[-1].content in observations


def test_skip_starts_at_a_later_item_of_the_split(tmp_path):
    execute(_oracle("babyai-putnext", tmp_path / "e.jsonl", split="train", skip=3, limit=2))
    assert sorted(e.item_id for e in read_records(tmp_path / "e.jsonl", Episode)) == [
        "babyai-putnext_1003",
        "babyai-putnext_1004",
    ]


class FailsOnItem(RandomPolicy):
    """Acts at random, but fails every turn of one item (as a crashed model would)."""

    def __init__(self, failing_index: int) -> None:
        super().__init__()
        self.failing_index = failing_index

    async def act(self, conversation, session):
        if session.index == self.failing_index:
            raise AgentGymError("the model fell over")
        return await super().act(conversation, session)


def test_each_seat_keeps_its_env_session_and_replaces_one_after_a_failure(tmp_path, monkeypatch):
    opened = []
    real_open = EnvClient.open

    async def counting_open(self):
        opened.append(await real_open(self))
        return opened[-1]

    monkeypatch.setattr(EnvClient, "open", counting_open)
    spec, out = get_spec("textcraft"), tmp_path / "episodes.jsonl"
    with env_servers(spec, []) as urls:
        asyncio.run(
            run_rollout(
                spec, urls, FailsOnItem(3), range(8), out, split="train", concurrency=2,
                max_rounds=3,
            )
        )  # fmt: skip
    episodes = read_records(out, Episode)
    assert sorted(parse_item_id(e.item_id)[1] for e in episodes) == list(range(8))
    failed = [e.item_id for e in episodes if e.meta["end_reason"] == END_ERROR]
    assert failed == ["textcraft_3"]
    # A reused session was reset to each item: each episode starts on its own task.
    goals = {e.steps[0].observation for e in episodes if e.item_id not in failed}
    assert len(goals) == 7
    # Two seats, one session each, and a new one for the seat whose episode failed.
    assert len(opened) == 3
    assert all(session.id is None for session in opened)  # all closed by the end


def test_a_rerun_resumes_only_the_same_settings(tmp_path):
    out = tmp_path / "episodes.jsonl"
    first = execute(_oracle("babyai-putnext", out, split="train", limit=2))
    assert first.finished == 2
    again = execute(_oracle("babyai-putnext", out, split="train", limit=3))  # more items: resumed
    assert (again.skipped, again.finished) == (2, 1)
    with pytest.raises(UsageError, match="max_rounds: 20 → 3"):
        execute(_oracle("babyai-putnext", out, split="train", limit=3, max_rounds=3))
    assert len(read_records(out, Episode)) == 3  # nothing lost
    replaced = execute(_oracle("babyai-putnext", out, split="train", limit=1, max_rounds=3,
                               overwrite=True))  # fmt: skip
    assert replaced.skipped == 0 and len(read_records(out, Episode)) == 1


def test_ctrl_c_says_how_to_resume_and_a_rerun_finishes(tmp_path):
    out = tmp_path / "demos.jsonl"
    command = [
        sys.executable, "-m", "agentcli.cli.main", "collect", "--env", "textcraft",
        "--split", "train", "--limit", "200", "--concurrency", "2", "--out", str(out),
    ]  # fmt: skip
    # 200 episodes take ~2 s: through a server whose steps take 0.1 s, ~50 s, so the Ctrl-C
    # lands midway however loaded the machine
    with running_server("textcraft") as server, app_in_thread(slow_proxy(server, 0.1)) as slow:
        process = subprocess.Popen(as_from_a_terminal([*command, "--env-server", slow]),
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not out.exists() or out.read_text().count("\n") < 5):
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 130, stderr
        assert len(read_records(out, Episode)) < 200
        assert (
            stderr.strip()
            .splitlines()[-1]
            .endswith("interrupted: rerun the same command to resume (finished work is kept)")
        )
        assert "Traceback" not in stderr
        rerun = subprocess.run([*command, "--env-server", server], capture_output=True, text=True,
                               timeout=900)  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    assert len({episode.item_id for episode in read_records(out, Episode)}) == 200


def test_progress_knows_the_items_before_the_first_episode_ends(tmp_path):
    seen: list[tuple[int, int, int]] = []
    execute(_oracle("babyai-putnext", tmp_path / "e.jsonl", split="train", limit=3),
            lambda stats: seen.append((stats.finished, stats.pending, stats.turns)))  # fmt: skip
    assert seen[0] == (0, 3, 0)
    assert [finished for finished, _, _ in seen] == [0, 1, 2, 3]
    assert seen[-1][2] == sum(e.n_steps for e in read_records(tmp_path / "e.jsonl", Episode))


def test_an_unreachable_endpoint_is_one_line_even_with_seats_in_flight(tmp_path):
    command = [
        sys.executable, "-m", "agentcli.cli.main", "rollout", "--env", "babyai-putnext",
        "--base-url", f"http://127.0.0.1:{free_port()}/v1", "--model-name", "m",
        "--limit", "4", "--concurrency", "4", "--out", str(tmp_path / "out"),
        "policy.max_retries=1",
    ]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr and "Retrying request" not in run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith("error: cannot reach the model endpoint")
