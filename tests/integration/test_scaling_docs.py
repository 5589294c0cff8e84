"""docs/scaling.md as its reader meets it: every YAML block is a valid accelerate config or
part of a valid iterate config (its agentgym lines are checked with the other pages', in
test_docs.py), and its two-node training recipe runs, on this CPU machine as two nodes of one
process each: node 0 under ``agentgym train``, node 1 by the page's own join command."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from accelerate.commands.config.config_args import ClusterConfig

from agentcli.common import free_port
from agentcli.iterate.loop import resolve_iterations
from tests.integration.test_train import agentgym_conversation
from tests.support.docs import FIXED_PORTS, ROOT, bash_blocks, environment
from tests.support.processes import stop_group

pytestmark = FIXED_PORTS

PAGE = ROOT / "docs" / "scaling.md"
BASE = {"run": "runs/x", "envs": ["sciworld", "textcraft"], "model": "models/m"}


def yaml_blocks() -> list[dict]:
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", PAGE.read_text(), re.S)]


def start(command: list[str], cwd: Path, log: Path) -> subprocess.Popen:
    """``command`` as the page's reader runs it (this checkout's agentgym first), in a session
    of its own so that stopping it stops what it launched."""
    return subprocess.Popen(command, cwd=cwd, env=environment(), stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip


def node_config() -> dict:
    [config] = [block for block in yaml_blocks() if "distributed_type" in block]
    return config


def test_every_yaml_block_is_a_valid_config(tmp_path):
    blocks = yaml_blocks()
    assert len(blocks) >= 6
    for number, block in enumerate(blocks):
        path = tmp_path / f"block{number}.yaml"
        if "distributed_type" in block:  # a node's accelerate config
            path.write_text(yaml.safe_dump(block))
            assert ClusterConfig.from_yaml_file(str(path)).num_machines == 2
            continue
        path.write_text(yaml.safe_dump({**BASE, **block}))
        [config] = resolve_iterations(path, [1], [])  # every stage's config validates too
        assert config.iter == 1


@pytest.mark.slow
def test_two_nodes_train_as_the_page_says(tiny_model, tmp_path):
    port = free_port()
    for rank in (0, 1):  # the page's node config, made to run on CPU: DDP over gloo
        node = {**node_config(), "machine_rank": rank, "main_process_ip": "127.0.0.1"}
        node.update(main_process_port=port, num_processes=2, mixed_precision="no")
        node.update(distributed_type="MULTI_GPU")  # FSDP needs GPUs
        del node["fsdp_config"]
        (tmp_path / f"node{rank}.yaml").write_text(yaml.safe_dump(node))
    data = tmp_path / "bc.json"
    data.write_text(json.dumps([agentgym_conversation(index) for index in range(16)]))
    out = tmp_path / "runs" / "two-nodes" / "seed0" / "iter0" / "model"  # as iterate lays it out
    logs = {rank: tmp_path / f"node{rank}.log" for rank in (0, 1)}  # files: a full pipe stalls
    [join] = [
        line.strip()
        for block in bash_blocks(PAGE)
        for line in block.splitlines()
        if "accelerate.commands.launch" in line
    ]
    nodes = [
        start(["agentgym", "train", "bc", "--data", str(data), "--model", str(tiny_model),
               "--out", str(out), "--accelerate-config", "node0.yaml"], tmp_path, logs[0]),
        start(["bash", "-c", join.replace("$k", "0")], tmp_path, logs[1]),  # the page's join
    ]  # fmt: skip
    try:
        # node 0 first: the join retries (every 10 s) until node 0 is up, so on a loaded
        # machine it may wait minutes; node 0 failing is the end, and its log says why
        deadline = time.monotonic() + 540
        while time.monotonic() < deadline and nodes[0].poll() is None:
            time.sleep(1)
        assert nodes[0].poll() == 0, logs[0].read_text()[-3000:]
        nodes[1].wait(timeout=max(deadline - time.monotonic(), 60))
        assert nodes[1].returncode == 0, logs[1].read_text()[-3000:]
    finally:
        for node in nodes:  # the test failed: stop each node and the launch it started
            stop_group(node)
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["global_step"] == 2  # 16 conversations over 2 ranks × batch 4: both trained
    assert (out / "model.safetensors").is_file()
