"""webarena, client only: our client, eval and rollout against a stand-in that speaks AgentGym's
webarena server's wire (tests/support/webarena_server.py), and what `env list` says."""

from __future__ import annotations

import asyncio
import json

import pytest

from agentcli.envs.wire.client import EnvClient
from agentcli.errors import EnvServerError
from tests.support.cli import agentgym
from tests.support.openai_server import openai_server
from tests.support.webarena_server import shopper, webarena_server


def test_our_client_plays_a_task_over_agentgyms_webarena_wire():
    async def scenario(url: str) -> list:
        async with EnvClient(url, "webarena") as client:
            session = await client.open()
            first = await session.reset(0)
            clicked = await session.step("click [1744]")
            stopped = await session.step("stop [$279.49]")
            with pytest.raises(EnvServerError, match="could not reset item 99.*'TimeoutError'"):
                await session.reset(99)
            await session.close()
            return [first, clicked, stopped]

    with webarena_server() as server:
        first, clicked, stopped = asyncio.run(scenario(server.url))
        # the first observation is the whole prompt, as AgentGym's client reads it
        assert first.observation.startswith("OBSERVATION:\n[1] RootWebArea 'One Stop Market'")
        assert first.observation.endswith(
            "OBJECTIVE: What is the price of HP Inkjet Fax Machine\nPREVIOUS ACTION: None"
        )
        assert first.extra["sites"] == ["shopping"]
        # the server's 1.0 for an action that ran is no reward: only the stop's counts
        assert (clicked.reward, clicked.done, clicked.success) == (0.0, False, False)
        assert "[1749] StaticText '$279.49'" in clicked.observation
        assert (stopped.reward, stopped.score, stopped.done, stopped.success) == (
            1.0, 1.0, True, True,
        )  # fmt: skip
        sent = [body for path, body in server.requests if path in ("/reset", "/step")]
        assert sent[:3] == [
            {"env_idx": 0, "idx": 0, "seed": 0},
            {"env_idx": 0, "action": "```click [1744]```"},
            {"env_idx": 0, "action": "```stop [$279.49]```"},
        ]
        assert server.requests[-1] == ("/close", {"env_idx": 0}) and server.envs == {}


def test_eval_and_rollout_run_on_a_webarena_server_and_env_list_says_it_is_client_only(tmp_path):
    with openai_server(shopper) as model, webarena_server() as server:
        common = ["--env", "webarena", "--env-server", server.url, "--base-url", model.url,
                  "--model-name", "m", "--limit", "2"]  # fmt: skip
        evaluated = agentgym("eval", *common, "--out", str(tmp_path / "eval"))
        rolled = agentgym("rollout", *common, "--split", "test", "--prompt", "native",
                          "--out", str(tmp_path / "rollout"))  # fmt: skip
        checked = agentgym("env", "check", server.url, "--env", "webarena", "--steps", "1")
        collected = agentgym("collect", "--env", "webarena", "--env-server", server.url,
                             "--out", str(tmp_path / "demos.jsonl"))  # fmt: skip
        assert server.envs == {}  # every env closed again
    assert evaluated.returncode == 0, evaluated.stderr
    assert rolled.returncode == 0, rolled.stderr
    for run, prompt in (("eval", "agentgym"), ("rollout", "native")):
        lines = (tmp_path / run / "episodes.jsonl").read_text().splitlines()
        episodes = {e["item_id"]: e for e in map(json.loads, lines)}
        # task 0 asks for the price; task 1 for the machine, which the price does not name
        assert {i: e["success"] for i, e in episodes.items()} == {
            "webarena_0": True, "webarena_1": False,
        }, run  # fmt: skip
        assert [s["action"] for s in episodes["webarena_0"]["steps"]] == [
            "click [1744]", "stop [$279.49]",
        ]  # fmt: skip
        assert {e["meta"]["prompt"] for e in episodes.values()} == {prompt}
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "verdict: PASS" in checked.stdout

    assert collected.returncode == 2 and collected.stderr.strip().count("\n") == 0
    assert "only a client for webarena, so no oracle plays it" in collected.stderr

    listed = agentgym("env", "list")
    row = next(line for line in listed.stdout.splitlines() if "webarena" in line)
    assert "client only" in row and "test 812" in row and "AgentGym's webarena" in row
    served = agentgym("env", "serve", "webarena")
    assert served.returncode == 2 and "only a client for webarena" in served.stderr
