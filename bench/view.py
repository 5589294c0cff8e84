"""`agentgym view` on a file of 100,000 episodes: how soon its list shows the first page, and
how much memory the server holds.

Writes N made-up episodes (five steps each, about 1 KB a line) into a temporary file, then:

- the baseline, in a child process: read the whole file as Episode records
  (``agentcli.data.jsonl.read_records``, what every stage does to load a file), timed, and
  that process's peak memory;
- the view, as a user runs it: ``agentgym view FILE --port 0`` in a child process; the time
  from its start to its "serving" line (the index is built before it serves), then over HTTP
  the list's first page, the first page of failed episodes, the last page, one episode's page
  and a text search; then the server's memory (VmRSS and its peak, VmHWM, from /proc). The
  same server on a file of one episode gives the memory the program itself takes, so what the
  index costs a record is the difference divided by N.

Goal: the first page under 200 ms; the server's memory bounded (a few dozen bytes a record,
far below the baseline's, which holds every record).

    .venv/bin/python bench/view.py [--episodes 100000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.view_records import write_many_episodes  # noqa: E402
from tests.support.view_server import running_view  # noqa: E402

MB = 1 << 20
_BASELINE = """
import json, resource, sys, time
from pathlib import Path
from agentcli.data.jsonl import read_records
from agentcli.records import Episode
started = time.perf_counter()
records = read_records(Path(sys.argv[1]), Episode)
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"records": len(records), "seconds": seconds, "peak": peak}))
"""


def baseline(path: Path) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", _BASELINE, str(path)], capture_output=True,
                          text=True, check=True)  # fmt: skip
    return json.loads(done.stdout)


def memory(pid: int) -> tuple[int, int]:
    """(resident, peak resident) bytes of a process."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return tuple(int(fields[name].split()[0]) * 1024 for name in ("VmRSS", "VmHWM"))  # type: ignore[return-value]


def get(url: str) -> tuple[float, dict]:
    started = time.perf_counter()
    with urllib.request.urlopen(url) as response:
        body = json.loads(response.read())
    return time.perf_counter() - started, body


def measure_view(path: Path) -> dict[str, float]:
    dataset = urllib.parse.quote(path.name)
    with running_view(path) as served:
        api = served.url + "api/"
        first, page = get(f"{api}list?d={dataset}")
        again = [get(f"{api}list?d={dataset}")[0] for _ in range(10)]
        failed, _ = get(f"{api}list?d={dataset}&success=false")
        last, _ = get(f"{api}list?d={dataset}&page={page['pages'] - 1}")
        episode, _ = get(f"{api}episode?d={dataset}&row={page['total'] // 2}")
        search, found = get(f"{api}list?d={dataset}&q=the+ball+{page['total'] // 2}")
        resident, peak = memory(served.process.pid)
        return {
            "started": served.started_s, "first": first, "again": statistics.median(again),
            "failed": failed, "last": last, "episode": episode, "search": search,
            "found": found["total"], "resident": resident, "peak": peak,
        }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentgym-bench-view-") as folder:
        big, small = Path(folder) / "episodes.jsonl", Path(folder) / "one.jsonl"
        size = write_many_episodes(big, args.episodes)
        write_many_episodes(small, 1)
        print(f"{args.episodes:,} episodes, {size / MB:.0f} MB")
        loaded = baseline(big)
        print(f"baseline (read_records, every record): {loaded['seconds']:.1f} s,"
              f" peak {loaded['peak'] / MB:.0f} MB")  # fmt: skip
        alone = measure_view(small)
        view = measure_view(big)
    per_record = (view["peak"] - alone["peak"]) / args.episodes
    print(f"view: serving after {view['started']:.1f} s (index built;"
          f" {view['started'] / loaded['seconds']:.2f}× the baseline's read)")  # fmt: skip
    print(f"  first page {1000 * view['first']:.0f} ms (goal < 200 ms), again"
          f" {1000 * view['again']:.0f} ms; failed only {1000 * view['failed']:.0f} ms;"
          f" last page {1000 * view['last']:.0f} ms; an episode {1000 * view['episode']:.0f} ms;"
          f" a text search {1000 * view['search']:.0f} ms ({view['found']} found)")  # fmt: skip
    print(f"  memory: {view['resident'] / MB:.0f} MB resident, peak {view['peak'] / MB:.0f} MB"
          f" ({view['peak'] / loaded['peak']:.2f}× the baseline's peak); on one episode"
          f" {alone['peak'] / MB:.0f} MB: {per_record:.0f} bytes a record")  # fmt: skip


if __name__ == "__main__":
    main()
