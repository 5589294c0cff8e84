"""OpenAIPolicy and `agentgym rollout --policy openai` against a real HTTP server that speaks
the OpenAI chat-completions format and fails on demand (tests/support/openai_server.py)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from agentcli.conversation import chat_dicts
from agentcli.data.jsonl import read_records
from agentcli.errors import FatalRunError, ModelAuthError, ModelEndpointError
from agentcli.policy import PolicyConfig, build_policy
from agentcli.policy.base import Reply
from agentcli.policy.openai_endpoint import OpenAIPolicy
from agentcli.records import ChatMessage, Episode
from agentcli.rollout import RolloutConfig, execute
from tests.support.openai_server import count_tokens, openai_server

API_KEY = "sk-test-4f9a2c7d1e"
CONVERSATION = [
    ChatMessage(role="user", content="Craft a stick. Answer as Thought then Action."),
    ChatMessage(role="assistant", content="OK"),
    ChatMessage(role="user", content="Crafting commands: craft 4 stick using 2 oak planks"),
]


def numbered_turn(messages: list[dict[str, str]]) -> str:
    """A reply that shows which turn the server saw: the thought counts the messages."""
    return f"Thought: turn {len(messages)}.\nAction: inventory"


@pytest.fixture
def server():
    with openai_server(numbered_turn) as running:
        yield running


def run_policy(url: str, count: int = 1, **options) -> list[Reply]:
    """``count`` concurrent turns through one policy; retries immediate unless asked."""

    async def scenario() -> list[Reply]:
        policy = OpenAIPolicy([url], "m", **{"max_retries": 0, **options})
        try:
            return await asyncio.gather(*(policy.act(CONVERSATION, None) for _ in range(count)))
        finally:
            await policy.aclose()

    return asyncio.run(scenario())


def test_reply_and_token_counts_come_from_the_server(server):
    [reply] = run_policy(server.url, max_tokens=64, temperature=0.5, seed=7, api_key=API_KEY)
    assert reply == Reply(
        text="Thought: turn 3.\nAction: inventory",
        prompt_tokens=sum(count_tokens(message.content) for message in CONVERSATION),
        completion_tokens=5,
    )
    [request] = server.requests
    assert request.body == {
        "model": "m", "messages": chat_dicts(CONVERSATION), "max_tokens": 64, "temperature": 0.5,
        "seed": 7,
    }  # fmt: skip
    assert request.authorization == f"Bearer {API_KEY}"


def test_the_server_lists_its_model(server):
    from openai import OpenAI

    with OpenAI(base_url=server.url, api_key="EMPTY", max_retries=0) as client:
        assert [model.id for model in client.models.list()] == ["m"]


@pytest.mark.parametrize("fault", ["rate_limit", "server_error"])
def test_rate_limits_and_server_errors_are_retried(server, fault):
    server.fail_next(fault, times=2)
    [reply] = run_policy(server.url, max_retries=2)
    assert reply.text.endswith("Action: inventory")
    assert len(server.requests) == 3


@pytest.mark.parametrize(("fault", "status"), [("rate_limit", 429), ("server_error", 500)])
def test_retries_are_bounded_and_end_in_one_line(server, fault, status):
    server.fail_next(fault, times=5)
    with pytest.raises(ModelEndpointError) as failure:
        run_policy(server.url, max_retries=2)
    message = str(failure.value)
    assert f"answered HTTP {status} (3 tries)" in message and "\n" not in message
    assert len(server.requests) == 3


def test_a_reply_slower_than_the_timeout_is_retried_then_fails_in_one_line(server):
    # the retry must be answered within the timeout: 1 s, which a busy 2-core machine running
    # the suite beside it still meets (0.25 s did not, once)
    server.slow_s = 3.0
    server.fail_next("slow")
    [reply] = run_policy(server.url, timeout_s=1.0, max_retries=1)
    assert reply.text.endswith("Action: inventory")

    server.fail_next("slow", times=2)
    with pytest.raises(ModelEndpointError, match=r"did not answer within 1 s, 2 times") as err:
        run_policy(server.url, timeout_s=1.0, max_retries=1)
    assert "\n" not in str(err.value)
    assert len(server.requests) == 4


def test_the_policy_config_sets_the_timeout_and_the_retries(server):
    server.slow_s = 1.0
    server.fail_next("slow", times=2)
    config = PolicyConfig(
        kind="openai", base_url=server.url, model_name="m", timeout_s=0.25, max_retries=1
    )

    async def one_turn() -> Reply:
        policy = build_policy(config, concurrency=1)
        try:
            return await policy.act(CONVERSATION, None)
        finally:
            await policy.aclose()

    with pytest.raises(ModelEndpointError, match=r"did not answer within 0.25 s, 2 times"):
        asyncio.run(one_turn())
    assert len(server.requests) == 2


def test_a_refused_key_gives_one_line_naming_the_key_and_no_retries(server):
    server.fail_next("unauthorized", times=5)
    with pytest.raises(ModelAuthError, match="refused the API key") as failure:
        run_policy(server.url, api_key=API_KEY, max_retries=2)
    message = str(failure.value)
    assert "OPENAI_API_KEY" in message and "\n" not in message and API_KEY not in message
    assert len(server.requests) == 1


def test_context_length_error_is_a_reply_that_ends_the_episode(server, tmp_path):
    server.fail_next("context_length")
    assert run_policy(server.url) == [Reply(text="", context_exceeded=True)]

    server.fail_next("context_length", after=2)  # the third turn no longer fits
    config = RolloutConfig(
        env="textcraft",
        limit=1,
        concurrency=1,
        out=tmp_path / "out.jsonl",
        policy=PolicyConfig(kind="openai", base_url=server.url, model_name="m"),
    )
    stats = execute(config)
    [episode] = read_records(tmp_path / "out.jsonl", Episode)
    assert stats.errors == 0
    assert episode.meta["end_reason"] == "context_exceeded"
    assert [step.action for step in episode.steps] == ["inventory", "inventory"]
    assert not episode.success


def test_at_most_concurrency_requests_are_in_flight(server):
    server.latency_s = 0.2
    replies = run_policy(server.url, count=12, concurrency=3)
    assert len(replies) == len(server.requests) == 12
    assert server.max_in_flight == 3


class Session:
    """Stands for an episode's env session: the policy keys its replica by it."""


def test_replicas_take_the_sessions_in_turn_and_each_session_keeps_its_own(server):
    with openai_server(numbered_turn) as other:
        sessions = [Session() for _ in range(3)]

        async def scenario() -> None:
            policy = OpenAIPolicy([server.url, other.url], "m", label="vllm", max_retries=0)
            try:
                for _ in range(2):  # two turns of each episode
                    await asyncio.gather(*(policy.act(CONVERSATION, s) for s in sessions))
            finally:
                await policy.aclose()
            assert policy.name == "vllm:m"

        asyncio.run(scenario())
        # sessions 0 and 2 on the first replica, session 1 on the second, every turn
        assert (len(server.requests), len(other.requests)) == (4, 2)


def test_rollout_command_records_what_the_endpoint_answered(server, tmp_path):
    out = tmp_path / "rollout"
    command = [
        sys.executable, "-m", "agentcli.cli.main", "--debug", "rollout", "--env", "textcraft",
        "--policy", "openai", "--base-url", server.url, "--model-name", "m", "--limit", "4",
        "--max-rounds", "3", "--out", str(out), f"policy.api_key={API_KEY}",
    ]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    episodes = read_records(out / "episodes.jsonl", Episode)
    assert len({episode.item_id for episode in episodes}) == 4
    for episode in episodes:
        assert [step.action for step in episode.steps] == ["inventory"] * 3
        assert [step.reason for step in episode.steps] == ["turn 3.", "turn 5.", "turn 7."]
        assert episode.meta["policy"] == "openai:m"
        assert episode.meta["end_reason"] == "max_rounds"
        assert episode.meta["completion_tokens"] == 3 * 5
    assert len(server.requests) == 12
    assert {request.authorization for request in server.requests} == {f"Bearer {API_KEY}"}
    # The key reached the server and nowhere else: not the debug log, the config or the records.
    config_text = (out / "config.yaml").read_text()
    assert "api_key: '***'" in config_text
    for text in (run.stdout, run.stderr, config_text, (out / "episodes.jsonl").read_text()):
        assert API_KEY not in text


def test_requests_to_the_endpoint_are_logged_only_with_debug(server, tmp_path):
    command = [
        sys.executable, "-m", "agentcli.cli.main", "rollout", "--env", "textcraft",
        "--base-url", server.url, "--model-name", "m", "--limit", "1", "--max-rounds", "2",
        "--out", str(tmp_path / "rollout"),
    ]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert len(server.requests) == 2 and "HTTP Request" not in run.stderr
    debug = subprocess.run([*command[:3], "--debug", *command[3:], "--overwrite"],
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert debug.returncode == 0 and "HTTP Request" in debug.stderr


def test_a_refused_key_stops_the_rollout_instead_of_failing_every_episode(server, tmp_path):
    server.fail_next("unauthorized", times=100)
    config = RolloutConfig(
        env="textcraft",
        limit=6,
        out=tmp_path / "out.jsonl",
        policy=PolicyConfig(kind="openai", base_url=server.url, model_name="m"),
    )
    with pytest.raises(ModelAuthError):
        execute(config)
    assert not (tmp_path / "out.jsonl").exists()


def test_a_wrong_base_url_stops_the_rollout_with_one_line(server, tmp_path):
    config = RolloutConfig(
        env="textcraft",
        limit=3,
        out=tmp_path / "out.jsonl",
        policy=PolicyConfig(kind="openai", base_url=f"{server.url}/v2", model_name="m"),
    )
    with pytest.raises(FatalRunError, match="check --base-url") as failure:
        execute(config)
    assert "\n" not in str(failure.value)
