"""A stand-in for vLLM and SGLang where no GPU is: ``python -m tests.support.engine_stand_in``
takes either engine's arguments as agentgym launches it (``MODEL`` or ``--model-path MODEL``,
``--host``, ``--port``, ``--served-model-name``) and serves the test suite's OpenAI-compatible
server (``openai_server.py``) there, answering only to the served name, as the engines do.

A config names it in place of the engine (``policy.command`` / ``teacher.command``). Like
vLLM, which forks its engine core, it starts a child process that only a stop of the whole
process group ends. It prints one ``stand-in: {json}`` line to its log first: its pid, the
child's, the model, port, served name and ``CUDA_VISIBLE_DEVICES``.

It answers a policy's turn with ``Thought: … Action: inventory`` and a teacher's annotate
request (its prompt lists the steps as ``### Step N``) with a reason for each step. Arguments
the real engines do not have, given through ``args``, script a failure:

- ``--fail-start``: print what an engine out of GPU memory prints, then exit 1;
- ``--never-ready``: run without ever listening;
- ``--latency S``: every reply takes S seconds (a rollout stays busy); ``GET /in_flight``
  says how many are being answered.

Tests name it with ``COMMAND`` (run from the repository root, or with ``ROOT`` on
``PYTHONPATH``), read its launches back with ``launches`` and check with ``running`` that
none of its processes is left.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import uvicorn

from tests.support.openai_server import FakeOpenAI

ROOT = Path(__file__).parents[2]
COMMAND = [sys.executable, "-m", "tests.support.engine_stand_in"]
_STEP = re.compile(r"^### Step (\d+)$", re.M)
_RECORD = "stand-in: "


def launches(log: Path) -> list[dict]:
    """What each launch logged to ``log`` about itself, in order."""
    lines = log.read_text(encoding="utf-8").splitlines()
    return [json.loads(line[len(_RECORD) :]) for line in lines if line.startswith(_RECORD)]


def running(pid: int) -> bool:
    """Whether ``pid`` is still a live process 5 s from now: a process just killed takes a
    moment to go, and a zombie waiting for its parent to reap it counts as gone."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        if state == "Z":
            return False
        time.sleep(0.05)
    return True


def reply(messages: list[dict[str, str]]) -> str:
    steps = _STEP.findall(messages[0]["content"])
    if steps:  # a teacher's annotate request
        reasons = [{"t": int(t), "reason": f"I take step {t} to get closer."} for t in steps]
        return json.dumps({"steps": reasons})
    return f"Thought: turn {len(messages)}, I look at what I hold.\nAction: inventory"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model", nargs="?")  # vllm serve MODEL
    parser.add_argument("--model-path")  # python -m sglang.launch_server --model-path MODEL
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--served-model-name", required=True)
    parser.add_argument("--fail-start", action="store_true")
    parser.add_argument("--never-ready", action="store_true")
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    # the sleep ends a leak by a failing test in minutes, long after any check of it
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    record = {
        "pid": os.getpid(),
        "child": child.pid,
        "model": args.model or args.model_path,
        "port": args.port,
        "served_name": args.served_model_name,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }
    print(f"{_RECORD}{json.dumps(record)}", flush=True)
    if args.fail_start:
        print("INFO loading weights", flush=True)
        print("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", flush=True)
        sys.exit(1)
    if args.never_ready:
        time.sleep(300)
    fake = FakeOpenAI(reply, model=args.served_model_name)
    fake.strict_model = True
    fake.latency_s = args.latency
    app = fake.app()
    app.get("/in_flight")(lambda: fake.in_flight)  # the replies being answered now
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
