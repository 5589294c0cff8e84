"""``quick_exit`` keeps every effect of Python's finalization that outlives the process (the
contract on CPython's private ``threading._shutdown`` and ``atexit._run_exitfuncs``) and skips
the module teardown."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

PROGRAM = textwrap.dedent(
    """
    import atexit, sys, tempfile, threading, time
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path
    from agentcli.quick_exit import quick_exit

    out = Path(sys.argv[1])

    class TornDown:
        def __del__(self):
            (out / "torn-down").write_text("")

    kept = TornDown()  # a module global: only the module teardown deletes it
    scratch = tempfile.TemporaryDirectory()  # removed by its finalizer at exit
    (out / "scratch").write_text(scratch.name)
    atexit.register(lambda: (out / "atexit").write_text("ran"))
    pool = ThreadPoolExecutor(1)
    pool.submit(time.sleep, 0)  # an idle worker left waiting on its queue

    def late_writer():
        time.sleep(0.3)
        (out / "thread").write_text("joined")

    threading.Thread(target=late_writer).start()
    sys.stdout.write("buffered, no newline")
    quick_exit(3)
    """
)


def test_quick_exit_finishes_what_finalization_would_and_skips_the_teardown(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout == "buffered, no newline"
    assert (tmp_path / "thread").read_text() == "joined"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert not Path((tmp_path / "scratch").read_text()).exists()
    assert not (tmp_path / "torn-down").exists()
    assert done.stderr == ""
