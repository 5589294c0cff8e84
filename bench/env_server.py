"""Throughput and latency of the textcraft environment server over HTTP.

Runs `agentgym env serve textcraft` in a child process and drives it from this process with
1 and 32 concurrent clients (threads with keep-alive connections), each looping `POST /step`
on its own session for a fixed time. Client and server share the machine's cores.
The baseline, measured in the same run, is the same steps called in-process with no HTTP:
the ratio says how much of the simulator's speed the server delivers.

    .venv/bin/python bench/env_server.py [--seconds 5]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentcli.envs.textcraft import SPEC  # noqa: E402
from tests.support.servers import running_server  # noqa: E402

ACTIONS = ("inventory", "get 1 oak log", "craft 1 nothing using 1 air")


def in_process_steps_per_s(seconds: float) -> float:
    session = SPEC.load().open_session()
    session.reset(12)
    steps, deadline = 0, time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        session.step(ACTIONS[steps % len(ACTIONS)])
        steps += 1
    return steps / seconds


def _client(port: int, index: int, deadline: float, latencies: list[float]) -> None:
    """One client: its own keep-alive connection and session, stepping until the deadline."""
    connection = http.client.HTTPConnection("127.0.0.1", port)

    def post(path: str, body: dict) -> dict:
        connection.request("POST", path, json.dumps(body), {"content-type": "application/json"})
        response = connection.getresponse()
        payload = json.loads(response.read())
        if response.status != 200:
            raise RuntimeError(f"{path}: {response.status} {payload}")
        return payload

    session = post("/create", {})["id"]
    post("/reset", {"id": session, "data_idx": index})
    steps = 0
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        post("/step", {"id": session, "action": ACTIONS[steps % len(ACTIONS)]})
        latencies.append(time.perf_counter() - start)
        steps += 1
    post("/close", {"id": session})
    connection.close()


def http_load(port: int, clients: int, seconds: float) -> tuple[float, list[float]]:
    """Blocking clients on threads: lighter than an async HTTP client, so the server is measured."""
    latencies: list[float] = []
    start = time.perf_counter()
    threads = [
        threading.Thread(target=_client, args=(port, i, start + seconds, latencies))
        for i in range(clients)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(latencies) / (time.perf_counter() - start), latencies


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()

    baseline = in_process_steps_per_s(args.seconds)
    print(f"baseline: in-process textcraft steps, no HTTP: {baseline:,.0f} steps/s")
    print(f"{'clients':>7} {'steps/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'vs in-process':>14}")
    with running_server("textcraft", "--max-sessions", "64") as url:
        port = int(url.rsplit(":", 1)[1])
        for clients in (1, 32):
            http_load(port, clients, 0.5)  # warm up connections and the task cache
            rate, latencies = http_load(port, clients, args.seconds)
            p50, p99 = percentile(latencies, 50) * 1e3, percentile(latencies, 99) * 1e3
            print(f"{clients:>7} {rate:>9,.0f} {p50:>8.2f} {p99:>8.2f} {rate / baseline:>13.1%}")


if __name__ == "__main__":
    main()
