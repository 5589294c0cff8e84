"""webshop served for real: AgentGym's webshop wire, our client and the oracle over HTTP, the
same goals in every process, and the commands a user runs (env list, collect, the BC
tutorial of docs/environments/webshop.md), and a soak of many sessions."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from agentcli.common import free_port, wait_until_answering
from agentcli.data.jsonl import read_records
from agentcli.records import Episode
from tests.support.cli import agentgym
from tests.support.docs import ROOT, bash_blocks, failure_text, run_block
from tests.support.processes import outputs_under_hash_seeds
from tests.support.servers import expert_episodes, running_server, running_server_process
from tests.support.webshop_original import convert_html_to_text

_DUMP = """
import json
import random
from agentcli.envs.webshop import SPEC
env = SPEC.load()
print(json.dumps([[g.text, g.product.asin] for g in env.goals[::97]]
                 + [[p.asin for p in env.search("blue hoodie for winter", random.Random(0))]]))
"""


def test_the_server_speaks_agentgyms_webshop_wire():
    with running_server("webshop") as url, httpx.Client(base_url=url, timeout=30) as http:
        assert http.get("/").status_code == 200
        env_idx = http.post("/create").json()
        assert isinstance(env_idx, int)
        observation, info = http.post("/reset", json={"env_idx": env_idx, "session_id": 7}).json()
        assert observation.startswith("WebShop [SEP] Instruction: [SEP] ") and info is None
        assert http.get("/observation", params={"env_idx": env_idx}).json() == observation
        step = http.post("/step", json={"env_idx": env_idx, "action": "search[hoodie]"}).json()
        assert {"state", "reward", "done", "info"} <= set(step)
        assert step["state"].startswith("Instruction: [SEP] ") and step["done"] is False
        assert http.post("/step", json={"env_idx": 999, "action": "x"}).status_code == 404
        assert http.post("/close", json={"env_idx": env_idx}).status_code == 200
        assert http.get("/health").json()["sessions"] == 0


def test_agentgyms_page_routes_answer_in_its_shapes():
    with running_server("webshop") as url, httpx.Client(base_url=url, timeout=30) as http:
        env_idx = http.post("/create").json()
        query = {"env_idx": env_idx}
        assert http.get("/state", params=query).status_code == 409  # no goal yet
        observation, _ = http.post("/reset", json={"env_idx": env_idx, "session_id": 7}).json()
        goal = observation.split(" [SEP] ")[2]
        # AgentGym's server documents this very answer for the search page
        actions = http.get("/available_actions", params=query).json()
        assert actions == {"has_search_bar": True, "clickables": ["search"]}
        assert http.get("/instruction_text", params=query).json() == f"Instruction: {goal}"
        step = http.post("/step", json={"env_idx": env_idx, "action": "search[hoodie]"}).json()
        actions = http.get("/available_actions", params=query).json()
        assert actions["has_search_bar"] is False
        assert actions["clickables"][:2] == ["back to search", "next >"]
        assert len(actions["clickables"]) == 12  # and the page's ten products
        assert http.get("/instruction_text", params=query).json() == f"Instruction:{goal}"
        state = http.get("/state", params=query).json()
        assert set(state) == {"url", "html", "instruction_text"}
        assert state["url"] == "http://127.0.0.1:3000/search_results/7/hoodie/1"
        assert state["instruction_text"] == f"Instruction: {goal}"  # read at the reset
        assert convert_html_to_text(state["html"]) == step["state"]
        first_product = actions["clickables"][2]
        for action in (f"click[{first_product}]", "click[buy now]"):
            http.post("/step", json={"env_idx": env_idx, "action": action})
        refused = http.get("/instruction_text", params=query)
        assert refused.status_code == 409 and "thank-you page" in refused.json()["error"]
        assert http.get("/available_actions", params={"env_idx": 999}).status_code == 404


def test_the_oracle_succeeds_through_our_client_and_sessions_end_closed():
    with running_server("webshop") as url:
        results = asyncio.run(expert_episodes(url, "webshop", list(range(20))))
        assert all(results.values()), results
        assert httpx.get(f"{url}/health").json()["sessions"] == 0


def test_goals_and_search_are_identical_across_processes_and_hash_seeds():
    dumps = outputs_under_hash_seeds(_DUMP)
    assert dumps[0] == dumps[1]
    assert len(json.loads(dumps[0])) > 20


def test_env_list_shows_webshop_ready_without_a_download():
    listed = agentgym("env", "list")
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if "webshop" in line)
    assert "ready" in row and "train" in row
    assert "noun tagger" not in listed.stdout  # spaCy's, which make install installs


# `agentgym ARGS` in a Python where spaCy is not installed: ``sys.modules[name] = None`` is how
# Python marks a module as absent (find_spec answers None, an import fails).
_WITHOUT_SPACY = (
    "import sys; sys.modules['spacy'] = None; from agentcli.cli.main import main;"
    " sys.argv[0] = 'agentgym'; main()"
)


def _without_spacy(*args: str) -> list[str]:
    return [sys.executable, "-c", _WITHOUT_SPACY, *args]


def test_without_spacy_env_list_and_env_serve_say_the_tagger_is_the_built_in_one():
    environ = {**os.environ, "COLUMNS": "400", "NO_COLOR": "1", "TERM": "dumb"}
    listed = subprocess.run(
        _without_spacy("env", "list"), capture_output=True, text=True, env=environ, timeout=120
    )
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if "webshop" in line)
    assert "ready: noun tagger: built-in" in row and "not spaCy's" in listed.stdout  # wrapped
    port = free_port()
    served = subprocess.Popen(
        _without_spacy("env", "serve", "webshop", "--port", str(port)),
        stderr=subprocess.PIPE, text=True, env=environ,
    )  # fmt: skip
    try:
        assert wait_until_answering(f"http://127.0.0.1:{port}/health", served,
                                    time.monotonic() + 120) == "ready"  # fmt: skip
    finally:
        served.terminate()
        _, errors = served.communicate(timeout=30)
    assert "webshop: noun tagger: built-in content-word tagger, not spaCy's" in errors


def test_collect_gives_oracle_demos_that_succeed(tmp_path):
    out = tmp_path / "demos.jsonl"
    run = agentgym("collect", "--env", "webshop", "--split", "train", "--limit", "200",
                   "--out", str(out))  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    episodes = read_records(out, Episode)
    assert len(episodes) == 200
    assert sum(episode.success for episode in episodes) >= 190
    assert all(episode.item_id.startswith("webshop_") for episode in episodes)


def test_eval_counts_the_oracles_steps_by_kind_over_a_served_webshop(tmp_path):
    """The oracle's episodes, played over AgentGym's wire (whose steps carry no candidate
    actions): every step sorts into a kind its page takes, and each episode buys once."""
    out = tmp_path / "eval"
    run = agentgym("eval", "--env", "webshop", "--policy", "oracle", "--split", "train",
                   "--limit", "8", "--out", str(out))  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    [overall] = json.loads((out / "metrics.json").read_text())
    kinds, episodes = overall["action_kinds"], read_records(out / "episodes.jsonl", Episode)
    assert sum(kinds.values()) == sum(episode.n_steps for episode in episodes)
    assert kinds["invalid"] == 0 and kinds["buy"] == 8 and kinds["result"] >= 8
    assert kinds["search"] >= 8 and kinds["option"] > 0
    assert overall["ends"]["done"] == 8 and overall["ends"]["max_rounds"] == 0


@pytest.mark.slow
def test_the_bc_tutorial_runs_as_written(tmp_path):
    block = bash_blocks(ROOT / "docs" / "environments" / "webshop.md")[0]
    assert "agentgym train bc --task webshop" in block
    run = run_block(block, tmp_path, timeout=1200)
    assert run.returncode == 0, failure_text(run)
    metrics = tmp_path / "runs/eval/runs-webshop-model/webshop/metrics.json"
    [overall] = json.loads(metrics.read_text())
    assert overall["episodes"] == 4
    # what the page says it holds: each step sorted into a kind, each episode's end
    assert sum(overall["action_kinds"].values()) == overall["mean_steps"] * 4
    assert sum(overall["ends"].values()) == 4


def test_the_rule_baseline_block_gives_the_pages_numbers_from_its_result_file(tmp_path):
    page = ROOT / "docs" / "environments" / "webshop.md"
    block = bash_blocks(page, after="## The rule baseline")[0]
    run = run_block(block, tmp_path, timeout=600)
    assert run.returncode == 0, failure_text(run)
    [measured] = json.loads((tmp_path / "runs/webshop-baseline/metrics.json").read_text())
    [published] = json.loads((ROOT / "docs/results/webshop-baseline.json").read_text())
    numbers = ("episodes", "success_rate", "mean_score", "mean_steps", "action_kinds", "ends")
    assert {k: measured[k] for k in numbers} == {k: published[k] for k in numbers}
    said = (
        f"mean score **{published['mean_score']:.3f} ± {published['score_se']:.3f}**, success"
        f" **{100 * published['success_rate']:.1f} ± {100 * published['success_se']:.1f} %**"
    )
    assert said in " ".join(page.read_text().split())
    kinds = measured["action_kinds"]  # search, click the first result, buy: nothing else
    assert kinds["search"] == kinds["result"] == kinds["buy"] == 300 and kinds["invalid"] == 0


def test_an_env_without_a_rule_baseline_refuses_the_policy(tmp_path):
    refused = agentgym("eval", "--env", "textcraft", "--policy", "baseline", "--limit", "1",
                       "--out", str(tmp_path / "eval"))  # fmt: skip
    assert refused.returncode != 0
    assert "textcraft has no rule baseline (these envs have one: webshop)" in refused.stderr
    assert not (tmp_path / "eval").exists()  # refused before anything is written


def _rss_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1])


async def _cycles(url: str, count: int, concurrency: int) -> Counter[int]:
    """``count`` sessions over AgentGym's wire: create, reset, search, next page, back, close."""
    statuses: Counter[int] = Counter()
    slots = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:

        async def cycle(n: int) -> None:
            async with slots:
                env_idx = (await http.post("/create")).json()
                search = f"search[{QUERIES[n % len(QUERIES)]}]"
                calls = [
                    ("/reset", {"session_id": n % 2000}),
                    ("/step", {"action": search}),
                    ("/step", {"action": "click[next >]"}),
                    ("/step", {"action": "click[back to search]"}),
                    ("/close", {}),
                ]
                for path, body in calls:
                    statuses[
                        (await http.post(path, json={"env_idx": env_idx, **body})).status_code
                    ] += 1

        await asyncio.gather(*(cycle(n) for n in range(count)))
    return statuses


QUERIES = ("red sneakers", "gluten free protein bar", "office chair", "bluetooth speaker",
           "hoodie for winter", "shampoo", "hdmi cable 6 feet", "herbal tea")  # fmt: skip


@pytest.mark.slow
def test_soak_many_sessions_get_no_errors_and_memory_stays_flat():
    with running_server_process("webshop") as (url, process):
        asyncio.run(_cycles(url, 300, 8))  # warm: search caches, allocator pools
        warm = _rss_kb(process.pid)
        statuses = asyncio.run(_cycles(url, 1500, 8))
        grown = _rss_kb(process.pid) - warm
        assert set(statuses) == {200}, statuses
        assert httpx.get(f"{url}/health").json()["sessions"] == 0
    assert grown < 20_000, f"RSS grew {grown} kB over 1,500 sessions"
