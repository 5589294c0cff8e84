"""The LLM teacher stages against a real HTTP server that speaks the OpenAI chat-completions
format and fails on demand (tests/support/openai_server.py): faults on a fraction of calls, a killed
run and its rerun, the cost ledger and budget, structured output, repairs, and the API key."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from agentcli.data.jsonl import read_records, write_records
from agentcli.errors import BudgetExceededError, ModelAuthError
from agentcli.records import Correction, Episode, PrivilegedState
from agentcli.teacher import Price, TeacherConfig
from agentcli.teacher.cache import CachedReply, request_key
from agentcli.teacher.ledger import LedgerEntry
from agentcli.teacher.stages import (
    AnnotateConfig,
    CorrectConfig,
    ExtractStateConfig,
    Failure,
    annotate,
    correct,
    extract_state,
)
from tests.support.openai_server import openai_server
from tests.support.teacher_episodes import (
    ACTIONS,
    corrections_reply,
    episode_asked_about,
    student_episodes,
)

SENTINEL_KEY = "sk-sentinel-7c1e9b04d2a5"
FAULTS = {"rate_limit": 0.06, "server_error": 0.06, "slow": 0.03, "invalid_json": 0.06,
          "drop_step": 0.06}  # fmt: skip


def rollout_dir(tmp_path: Path, episodes: list[Episode]) -> Path:
    folder = tmp_path / "run" / "iter0" / "rollout"
    write_records(folder / "episodes.jsonl", episodes)
    return folder


def teacher(url: str, **options) -> TeacherConfig:
    return TeacherConfig(
        kind="openai", base_url=url, model_name="m", timeout_s=2.0, **{"max_retries": 3, **options}
    )


def cached_keys(path: Path) -> set[str]:
    return {reply.key for reply in read_records(path, CachedReply)} if path.exists() else set()


def test_200_corrections_under_faults_finish_or_fail_with_a_reason_and_rerun_clean(tmp_path):
    episodes = student_episodes(200)
    with openai_server(corrections_reply(episodes)) as server:
        server.slow_s = 3.0  # past the client's 2 s timeout (shorter ones time out under load too)
        server.fail_randomly(FAULTS, seed=3)
        # One retry and one repair, so that a few items of 200 fail (about 1 in 20).
        config = CorrectConfig(
            env="textcraft",
            rollout=rollout_dir(tmp_path, episodes),
            teacher=teacher(server.url, max_retries=1, max_repairs=1),
        )
        stats = correct(config)
        out = tmp_path / "run" / "iter0" / "correction"
        corrections = read_records(out / "corrections.jsonl", Correction)
        failures = read_records(out / "failures.jsonl", Failure)
        done = [correction.item_id for correction in corrections]
        failed = [failure.item_id for failure in failures]
        assert len(done) == len(set(done)) == stats.done
        assert len(failed) == len(set(failed)) == stats.failed > 0
        assert sorted(done + failed) == sorted(episode.item_id for episode in episodes)
        assert all(failure.reason for failure in failures)

        # Every attempt is one ledger line, retried and repaired ones included.
        ledger = read_records(out / "ledger.jsonl", LedgerEntry)
        assert len(ledger) == len(server.requests) == stats.calls.sent
        statuses = Counter(request.status for request in server.requests)
        outcomes = Counter(entry.outcome for entry in ledger)
        assert outcomes["http_429"] == statuses[429] > 0
        assert outcomes["http_500"] == statuses[500] > 0
        assert outcomes["timeout"] > 0
        assert outcomes["invalid"] == stats.calls.repairs + _unrepaired(failures) > 0
        assert sum(entry.retries > 0 for entry in ledger) == stats.calls.retries > 0

        by_id = {episode.item_id: episode for episode in episodes}
        for correction in corrections:
            episode = by_id[correction.item_id]
            assert [step.original_action for step in correction.steps] == [
                step.action for step in episode.steps
            ]
            assert [step.original_reason for step in correction.steps] == [
                step.reason for step in episode.steps
            ]
            for step, student in zip(correction.steps, episode.steps, strict=True):
                assert step.corrected_action in (student.candidate_actions or ACTIONS)
                assert step.is_corrected == (step.corrected_action != student.action)

        # The rerun tries only the failed items and sends nothing already answered.
        answered = cached_keys(out / "cache.jsonl")
        server.fail_randomly({})
        before = len(server.requests)
        rerun = correct(config)
        resent = [request_key(r.body) for r in server.requests[before:]]
        assert not answered & set(resent)
        assert (rerun.skipped, rerun.done, rerun.failed) == (stats.done, stats.failed, 0)
        final = [c.item_id for c in read_records(out / "corrections.jsonl", Correction)]
        assert sorted(final) == sorted(by_id) and len(final) == len(set(final))
        assert read_records(out / "failures.jsonl", Failure) == []


def _unrepaired(failures: list[Failure]) -> int:
    """Invalid replies after which no repair was sent: the last one of each unusable item."""
    return sum("unusable after" in failure.reason for failure in failures)


def test_a_killed_run_resends_nothing_cached_and_no_file_or_log_holds_the_key(tmp_path):
    episodes = student_episodes(60)
    rollout = rollout_dir(tmp_path, episodes)
    out = tmp_path / "run" / "iter0" / "correction"
    with openai_server(corrections_reply(episodes)) as server:
        server.latency_s = 0.05
        server.fail_randomly({"rate_limit": 0.1, "invalid_json": 0.1}, seed=1)
        command = [
            sys.executable, "-m", "agentcli.cli.main", "--debug", "correct", "--env", "textcraft",
            "--rollout", str(rollout), "--base-url", server.url, "--model-name", "m",
            "--concurrency", "4", f"teacher.api_key={SENTINEL_KEY}",
        ]  # fmt: skip
        first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while len(cached_keys(out / "cache.jsonl")) < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        logs = list(first.communicate(timeout=30))
        answered = cached_keys(out / "cache.jsonl")
        assert 20 <= len(answered) < len(episodes)
        sent_before = len(server.requests)

        second = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert second.returncode == 0, second.stderr
        logs += [second.stdout, second.stderr]
        resent = [request_key(request.body) for request in server.requests[sent_before:]]
        assert not answered & set(resent)
        assert {request.authorization for request in server.requests} == {f"Bearer {SENTINEL_KEY}"}

    done = [c.item_id for c in read_records(out / "corrections.jsonl", Correction)]
    assert sorted(done) == sorted(e.item_id for e in episodes) and len(done) == len(set(done))
    assert "60 done" not in second.stdout and "already done" in second.stdout
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert {path.name for path in files} >= {"config.yaml", "ledger.jsonl", "cache.jsonl"}
    for path in files:
        assert SENTINEL_KEY not in path.read_text(), path
    for text in logs:
        assert SENTINEL_KEY not in text


def test_max_cost_stops_before_the_budget_and_a_rerun_with_more_finishes(tmp_path):
    episodes = student_episodes(40)
    with openai_server(corrections_reply(episodes)) as server:
        prices = {"m": Price(input=100.0, output=100.0)}  # $0.0001 a token
        config = CorrectConfig(
            env="textcraft",
            rollout=rollout_dir(tmp_path, episodes),
            teacher=teacher(server.url, prices=prices, max_cost=0.5, max_tokens=200),
        )
        with pytest.raises(BudgetExceededError, match=r"stopped before exceeding --max-cost \$0.5"):
            correct(config)
        out = tmp_path / "run" / "iter0" / "correction"
        ledger = read_records(out / "ledger.jsonl", LedgerEntry)
        spent = sum(entry.cost_usd for entry in ledger)
        done = read_records(out / "corrections.jsonl", Correction)
        assert 0 < spent <= 0.5
        assert 0 < len(done) < len(episodes)
        assert not (out / "failures.jsonl").exists()  # not sent is not failed
        assert len(server.requests) == len(ledger)

        answered = cached_keys(out / "cache.jsonl")
        before = len(server.requests)
        config.teacher.max_cost = 100.0
        stats = correct(config)
        assert stats.skipped == len(done) and stats.done == len(episodes) - len(done)
        assert not answered & {request_key(r.body) for r in server.requests[before:]}
        assert stats.spent == pytest.approx(
            sum(entry.cost_usd for entry in read_records(out / "ledger.jsonl", LedgerEntry))
        )


def test_a_server_without_structured_output_gets_plain_json_requests(tmp_path):
    episodes = student_episodes(3)
    with openai_server(corrections_reply(episodes)) as server:
        server.refuse_response_format = True
        config = CorrectConfig(
            env="textcraft",
            rollout=rollout_dir(tmp_path, episodes),
            teacher=teacher(server.url, concurrency=1),
        )
        stats = correct(config)
        refused, *accepted = server.requests
        schema = refused.body["response_format"]["json_schema"]
        assert schema["name"] == "CorrectionReply" and "steps" in schema["schema"]["properties"]
        assert refused.status == 400
        assert [request.status for request in accepted] == [200] * 3
        assert all("response_format" not in request.body for request in accepted)
        ledger = read_records(config.side_file("ledger.jsonl"), LedgerEntry)
        assert [entry.outcome for entry in ledger] == ["format_refused", "ok", "ok", "ok"]
        assert stats.done == 3


def test_an_action_the_env_does_not_offer_is_sent_back_with_the_problem(tmp_path):
    [episode] = student_episodes(1, start=1)  # step 1 lists its valid actions
    good = corrections_reply([episode])
    replies = iter([good, good])

    def first_wrong(messages):
        reply = json.loads(next(replies)(messages))
        if len(messages) == 1:
            reply["steps"][1]["action"] = "fly to the moon"
        return json.dumps(reply)

    with openai_server(first_wrong) as server:
        config = CorrectConfig(
            env="textcraft", rollout=rollout_dir(tmp_path, [episode]), teacher=teacher(server.url)
        )
        stats = correct(config)
    assert stats.done == 1 and stats.calls.repairs == 1
    repair = server.requests[1].body["messages"]
    assert [message["role"] for message in repair] == ["user", "assistant", "user"]
    assert "fly to the moon" in repair[1]["content"]
    assert (
        "step 1: action 'fly to the moon' is not one of that step's valid actions"
        in (repair[2]["content"])
    )
    [correction] = read_records(config.output_path, Correction)
    assert correction.steps[1].corrected_action == ACTIONS[0]


def test_replies_still_unusable_after_the_repairs_fail_the_item_with_the_reason(tmp_path):
    with openai_server(lambda messages: "I would rather not answer in JSON.") as server:
        config = CorrectConfig(
            env="textcraft",
            rollout=rollout_dir(tmp_path, student_episodes(2)),
            teacher=teacher(server.url, max_repairs=1),
        )
        stats = correct(config)
    assert (stats.done, stats.failed) == (0, 2)
    assert len(server.requests) == 4  # each item: the request and one repair
    reasons = {
        failure.reason for failure in read_records(config.side_file("failures.jsonl"), Failure)
    }
    assert reasons == {"the reply was unusable after 1 repairs: it holds no JSON object"}


def test_dry_run_estimates_the_cost_and_sends_and_writes_nothing(tmp_path):
    episodes = student_episodes(5)
    with openai_server(corrections_reply(episodes)) as server:
        config = CorrectConfig(
            env="textcraft",
            rollout=rollout_dir(tmp_path, episodes),
            teacher=teacher(
                server.url, dry_run=True, max_tokens=1000, prices={"m": Price(input=1, output=2)}
            ),
        )
        stats = correct(config)
        assert server.requests == []
    assert stats.estimated == 5 and stats.done == 0
    # max_tokens of reply per call at $2/1M is 5 x $0.002; the prompts add a little more.
    assert 0.01 < stats.calls.estimated_cost < 0.02
    assert not (tmp_path / "run" / "iter0" / "correction").exists()


def test_a_refused_key_stops_the_stage_with_one_line(tmp_path):
    with openai_server(corrections_reply(student_episodes(8))) as server:
        server.fail_next("unauthorized", times=100)
        config = CorrectConfig(
            env="textcraft",
            rollout=rollout_dir(tmp_path, student_episodes(8)),
            teacher=teacher(server.url, api_key=SENTINEL_KEY),
        )
        with pytest.raises(ModelAuthError, match="teacher.api_key") as failure:
            correct(config)
    assert SENTINEL_KEY not in str(failure.value) and "\n" not in str(failure.value)
    assert not config.output_path.exists()


def test_annotate_and_extract_state_with_an_llm(tmp_path):
    demos = student_episodes(4)
    by_index = {demo.index: demo for demo in demos}

    def reply(messages):
        demo = episode_asked_about(messages, by_index)
        if '"plan"' in messages[0]["content"]:
            plan = ["get 1 oak log", "craft 4 oak planks using 1 oak log"]
            objects = ["oak log: get it"]
            return json.dumps(
                {"goal": f"craft item-{demo.index}", "objects": objects, "plan": plan}
            )
        steps = [{"t": t, "reason": f"why {t}"} for t in range(demo.n_steps)]
        return json.dumps({"steps": steps})

    write_records(tmp_path / "demos.jsonl", demos)
    with openai_server(reply) as server:
        annotated = AnnotateConfig(
            env="textcraft", demos=tmp_path / "demos.jsonl", teacher=teacher(server.url)
        )
        assert annotate(annotated).done == 4
        state = ExtractStateConfig(
            env="textcraft", demos=tmp_path / "demos.jsonl", teacher=teacher(server.url)
        )
        assert extract_state(state).done == 4
    for prompt in (request.body["messages"][0]["content"] for request in server.requests):
        assert "student reason" not in prompt  # the demo's own reasons are not shown

    written = read_records(tmp_path / "demos.annotated.jsonl", Episode)
    assert sorted(e.item_id for e in written) == sorted(d.item_id for d in demos)
    for episode in written:
        assert [step.reason for step in episode.steps] == [
            f"why {t}" for t in range(episode.n_steps)
        ]
        assert episode.meta["annotated_by"] == "openai:m"
    states = {
        s.item_id: s.text
        for s in read_records(tmp_path / "privileged_state.jsonl", PrivilegedState)
    }
    assert states["textcraft_2"] == (
        "Goal: craft item-2\nObjects:\n- oak log: get it\n"
        "Plan:\n1. get 1 oak log\n2. craft 4 oak planks using 1 oak log"
    )


def test_correct_command_dry_run_and_print_config_hide_the_key(tmp_path):
    rollout = rollout_dir(tmp_path, student_episodes(3))
    base = [sys.executable, "-m", "agentcli.cli.main", "correct", "--env", "textcraft",
            "--rollout", str(rollout), "--base-url", "http://127.0.0.1:9/v1", "--model-name",
            "gpt-4o-mini", f"teacher.api_key={SENTINEL_KEY}"]  # fmt: skip
    env = {**os.environ, "COLUMNS": "200"}
    shown = subprocess.run([*base, "--print-config"], capture_output=True, text=True, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "api_key: '***'" in shown.stdout and SENTINEL_KEY not in shown.stdout
    assert f"out: {tmp_path / 'run' / 'iter0' / 'correction'}" in shown.stdout
    dry = subprocess.run([*base, "--dry-run"], capture_output=True, text=True, env=env)
    assert dry.returncode == 0, dry.stderr
    assert "correct (dry run): 3 items would send requests costing at most $0.00" in dry.stdout
    assert not (tmp_path / "run" / "iter0" / "correction").exists()
