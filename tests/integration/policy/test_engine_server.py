"""Engines a stage launches (``agentcli.policy.engine_server``), with a stand-in for vLLM that
speaks the OpenAI wire (tests/support/engine_stand_in.py): started with vLLM's command line
on its GPU sets, ready when it answers, stopped with every process it started however the
block ends, and one line with the end of its log when it does not start; then a rollout, an
interrupted rollout and a teacher stage that launch it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import httpx
import pytest

from agentcli.data.jsonl import read_records, write_records
from agentcli.errors import EngineServerError, UsageError
from agentcli.policy import PolicyConfig
from agentcli.policy.engine_server import serve_engine
from agentcli.records import Episode
from agentcli.teacher import TeacherConfig
from agentcli.teacher.stages import AnnotateConfig, annotate
from tests.support.cli import agentgym
from tests.support.engine_stand_in import COMMAND, ROOT, launches, running
from tests.support.processes import as_from_a_terminal
from tests.support.teacher_episodes import student_episodes


@pytest.fixture(autouse=True)
def stand_in_importable(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))


def settings(*args: str, **fields) -> PolicyConfig:
    return PolicyConfig(kind="vllm", model="models/m", command=COMMAND, args=list(args), **fields)


def serve(config, tmp_path):
    return serve_engine(
        config.kind, config, "models/m", log_file=lambda name: tmp_path / name, setting="policy"
    )


def processes(tmp_path) -> list[int]:
    return [
        pid
        for log in tmp_path.glob("*.log")
        for r in launches(log)
        for pid in (r["pid"], r["child"])
    ]


def test_replicas_serve_the_model_on_their_gpus_and_leave_no_process(tmp_path):
    with serve(settings(gpus=[0, "1,2"]), tmp_path) as endpoints:
        assert endpoints.model_name == "models/m"
        for url in endpoints.base_urls:
            served = httpx.get(f"{url}/models").json()["data"]
            assert [entry["id"] for entry in served] == ["models/m"]
        records = [launches(tmp_path / f"vllm-{n}.log") for n in (0, 1)]
    assert [(r["model"], r["served_name"], r["cuda_visible_devices"]) for [r] in records] == [
        ("models/m", "models/m", "0"),
        ("models/m", "models/m", "1,2"),
    ]
    assert [f"http://127.0.0.1:{r['port']}/v1" for [r] in records] == list(endpoints.base_urls)
    header = (tmp_path / "vllm-0.log").read_text().splitlines()[0]
    assert header.startswith("--- agentgym starts: CUDA_VISIBLE_DEVICES=0 ")
    port = records[0][0]["port"]
    assert header.endswith(f" models/m --host 127.0.0.1 --port {port} --served-model-name models/m")
    assert not any(running(pid) for pid in processes(tmp_path))


def test_a_fixed_port_numbers_the_replicas_from_it(tmp_path):
    from agentcli.common import free_port

    port = free_port()
    with serve(settings(port=port), tmp_path) as endpoints:
        assert endpoints.base_urls == (f"http://127.0.0.1:{port}/v1",)
    assert [r["port"] for r in launches(tmp_path / "vllm.log")] == [port]


def test_ctrl_c_inside_the_block_stops_the_engine(tmp_path):
    with pytest.raises(KeyboardInterrupt), serve(settings(), tmp_path):
        raise KeyboardInterrupt
    assert processes(tmp_path) and not any(running(pid) for pid in processes(tmp_path))


def test_an_engine_that_exits_early_is_one_line_with_the_end_of_its_log(tmp_path):
    with pytest.raises(EngineServerError) as error, serve(settings("--fail-start"), tmp_path):
        pytest.fail("the block must not run")
    message = str(error.value)
    assert "\n" not in message
    assert "vllm serving models/m exited with code 1 before it was ready" in message
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert message.endswith(f"INFO loading weights | {oom}")
    assert not any(running(pid) for pid in processes(tmp_path))  # the child it forked too


def test_an_engine_never_ready_is_stopped_after_its_timeout(tmp_path):
    config = settings("--never-ready", ready_timeout_s=1.5)
    late = r"was not ready after 1.5 s \(raise ready_timeout_s"
    with pytest.raises(EngineServerError, match=late), serve(config, tmp_path):
        pytest.fail("the block must not run")
    assert not any(running(pid) for pid in processes(tmp_path))


def test_a_second_launch_adds_to_the_log(tmp_path):
    for _ in range(2):
        with serve(settings(), tmp_path):
            pass
    assert len(launches(tmp_path / "vllm.log")) == 2


def test_an_engine_that_is_not_installed_is_one_line(tmp_path):
    config = PolicyConfig(kind="vllm", model="models/m", command=["no-such-vllm", "serve"])
    missing = r"policy.command: 'no-such-vllm' is not installed here"
    with pytest.raises(UsageError, match=missing), serve(config, tmp_path):
        pass


def test_engine_settings_belong_to_kinds_that_launch_one():
    assert PolicyConfig(kind="vllm", model="m").command == ["vllm", "serve"]
    assert TeacherConfig(kind="sglang", model="q").command == [
        "python",
        "-m",
        "sglang.launch_server",
    ]
    with pytest.raises(ValueError, match="gpus, port: for kind vllm or sglang"):
        PolicyConfig(kind="local", model="m", gpus=["0"], port=8000)
    with pytest.raises(ValueError, match="a vllm policy serves a model directory"):
        PolicyConfig(kind="vllm")
    with pytest.raises(ValueError, match="a sglang teacher serves teacher.model=MODEL"):
        TeacherConfig(kind="sglang")
    with pytest.raises(ValueError, match="drop --base-url"):
        TeacherConfig(kind="vllm", model="q", base_url="http://h/v1", model_name="q")


# --- through the commands that launch it -----------------------------------------------------


def engine_override(*args: str) -> list[str]:
    overrides = [f"policy.command=[{', '.join(COMMAND)}]"]
    return overrides + ([f"policy.args=[{', '.join(args)}]"] if args else [])


def test_rollout_plays_through_the_engine_it_launches_and_stops_it(tiny_model, tmp_path):
    out = tmp_path / "rollout"
    run = agentgym(
        "rollout", "--env", "textcraft", "--policy", "vllm", "--model", str(tiny_model),
        "--limit", "2", "--concurrency", "2", "--max-rounds", "2", "--out", str(out),
        *engine_override(),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    episodes = read_records(out / "episodes.jsonl", Episode)
    assert len(episodes) == 2
    for episode in episodes:
        assert episode.meta["policy"] == f"vllm:{tiny_model}"
        assert [step.action for step in episode.steps] == ["inventory", "inventory"]
    [launch] = launches(out / "vllm.log")
    assert launch["model"] == launch["served_name"] == str(tiny_model)
    assert not running(launch["pid"]) and not running(launch["child"])


def test_ctrl_c_during_a_rollout_stops_the_engine(tiny_model, tmp_path):
    out = tmp_path / "rollout"
    command = [
        sys.executable, "-m", "agentcli.cli.main", "rollout", "--env", "textcraft",
        "--policy", "vllm", "--model", str(tiny_model), "--limit", "4", "--out", str(out),
        *engine_override("--latency", "30"),
    ]  # fmt: skip
    process = subprocess.Popen(
        as_from_a_terminal(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        launch = wait_for_launch(out / "vllm.log", process)
        in_flight = f"http://127.0.0.1:{launch['port']}/in_flight"
        deadline = time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline and not _busy(in_flight):
            time.sleep(0.1)  # until the rollout's first turns are in flight, each waiting 30 s
        process.send_signal(signal.SIGINT)  # what Ctrl-C sends: the engine has a group of its own
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr
    assert not running(launch["pid"]) and not running(launch["child"])


def wait_for_launch(log, process, timeout_s: float = 180) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        if log.exists() and launches(log):
            return launches(log)[0]
        time.sleep(0.1)
    pytest.fail(f"the engine was never launched: {process.communicate()[1][-2000:]}")


def _busy(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).json() > 0
    except httpx.TransportError:
        return False


def test_a_teacher_served_by_its_engine_annotates_and_costs_nothing(tmp_path, caplog):
    demos = tmp_path / "demos.jsonl"
    write_records(demos, student_episodes(3))
    teacher = TeacherConfig(kind="vllm", model="teachers/big", command=COMMAND, concurrency=2)
    stats = annotate(AnnotateConfig(env="textcraft", demos=demos, teacher=teacher))
    assert (stats.done, stats.failed, stats.spent) == (3, 0, 0.0)
    annotated = {e.item_id: e for e in read_records(tmp_path / "demos.annotated.jsonl", Episode)}
    reasons = [step.reason for step in annotated["textcraft_0"].steps]  # written as they finish
    assert reasons == ["I take step 0 to get closer.", "I take step 1 to get closer."]
    [launch] = launches(tmp_path / "demos.annotated.vllm.log")
    assert launch["model"] == launch["served_name"] == "teachers/big"
    assert not running(launch["pid"]) and not running(launch["child"])
    assert "no price" not in caplog.text
