"""Throughput and latency of an environment server over HTTP (textcraft, or webshop).

Runs `agentgym env serve <env>` in a child process and drives it from this process with
1 and 32 concurrent clients (threads with keep-alive connections), each looping `POST /step`
on its own session for a fixed time, in the env's own wire (webshop's: `env_idx`). Client and
server share the machine's cores. The baseline, measured in the same run, is the same steps
called in-process with no HTTP: the ratio says how much of the simulator's speed the server
delivers. webshop's loop is a search (a new query each time: no cached results), the next
results page, and back to the search page.

    .venv/bin/python bench/env_server.py [--env webshop] [--seconds 5]
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

from agentcli.envs.registry import get_spec  # noqa: E402
from tests.support.servers import running_server  # noqa: E402

# A loop of steps each valid where the one before leaves the session; {n} counts the steps.
ACTIONS = {
    "textcraft": ("inventory", "get 1 oak log", "craft 1 nothing using 1 air"),
    "webshop": ("search[red sneakers size {n}]", "click[next >]", "click[back to search]"),
}


def _action(env: str, step: int) -> str:
    return ACTIONS[env][step % len(ACTIONS[env])].format(n=step)


def in_process_steps_per_s(env: str, seconds: float) -> float:
    session = get_spec(env).load().open_session()
    session.reset(12)
    steps, deadline = 0, time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        session.step(_action(env, steps))
        steps += 1
    return steps / seconds


def _client(env: str, port: int, index: int, deadline: float, latencies: list[float]) -> None:
    """One client: its own keep-alive connection and session, stepping until the deadline."""
    connection = http.client.HTTPConnection("127.0.0.1", port)

    def post(path: str, body: dict) -> dict:
        connection.request("POST", path, json.dumps(body), {"content-type": "application/json"})
        response = connection.getresponse()
        payload = json.loads(response.read())
        if response.status != 200:
            raise RuntimeError(f"{path}: {response.status} {payload}")
        return payload

    wire = get_spec(env).wire
    created = post("/create", {})
    session = created if isinstance(created, int) else created[wire.id_field]
    post("/reset", wire.reset_body(session, index))
    steps = 0
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        post("/step", {wire.id_field: session, "action": _action(env, steps)})
        latencies.append(time.perf_counter() - start)
        steps += 1
    post("/close", {wire.id_field: session})
    connection.close()


def http_load(env: str, port: int, clients: int, seconds: float) -> tuple[float, list[float]]:
    """Blocking clients on threads: lighter than an async HTTP client, so the server is measured."""
    latencies: list[float] = []
    start = time.perf_counter()
    threads = [
        threading.Thread(target=_client, args=(env, port, i, start + seconds, latencies))
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
    parser.add_argument("--env", choices=sorted(ACTIONS), default="textcraft")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()

    baseline = in_process_steps_per_s(args.env, args.seconds)
    print(f"baseline: in-process {args.env} steps, no HTTP: {baseline:,.0f} steps/s")
    print(f"{'clients':>7} {'steps/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'vs in-process':>14}")
    with running_server(args.env, "--max-sessions", "64") as url:
        port = int(url.rsplit(":", 1)[1])
        for clients in (1, 32):
            http_load(args.env, port, clients, 0.5)  # warm up connections and the task cache
            rate, latencies = http_load(args.env, port, clients, args.seconds)
            p50, p99 = percentile(latencies, 50) * 1e3, percentile(latencies, 99) * 1e3
            print(f"{clients:>7} {rate:>9,.0f} {p50:>8.2f} {p99:>8.2f} {rate / baseline:>13.1%}")


if __name__ == "__main__":
    main()
