"""What every layer shares, kept below all of them so that none imports another layer for it.

- ``free_port``: a free loopback TCP port (env servers, the accelerate launcher, tests).
- ``die_with_parent``: a child process's ``preexec_fn`` that ends it with the command that
  started it (env servers, inference engines).
- ``wait_until_answering``: poll a child server's URL until it answers, it exits, or time is
  up (env servers, inference engines).
- ``write_atomic``: replace a file through a temporary file and a rename (records, configs,
  the manifest, metrics), so a killed run never leaves half a file.
- ``no_progress_bars``: transformers' per-file progress bars off while ours are on screen.
- ``EndReason`` and its values: why an episode ended (``Episode.meta["end_reason"]``), written
  by rollouts and read by teachers, eval and the data builders.

It imports only the standard library at import time (transformers inside
``no_progress_bars``), so any module may use it without slowing ``agentgym --help``.
"""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Literal

EndReason = Literal["done", "max_rounds", "context_exceeded", "error"]
END_DONE: Final[EndReason] = "done"  # the environment said done
END_MAX_ROUNDS: Final[EndReason] = "max_rounds"  # out of turns
END_CONTEXT: Final[EndReason] = "context_exceeded"  # the conversation outgrew the model
END_ERROR: Final[EndReason] = "error"  # it failed (``meta["error"]`` says why); rerun redoes it


PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In the child: ask Linux to SIGTERM us when the parent dies, even by kill -9, so no
    server outlives the command that started it. Linux counts the thread that forked as the
    parent: start children from the main thread, not from a worker thread that ends first."""
    if sys.platform == "linux":
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def listen_error(host: str, port: int) -> OSError | None:
    """Why a server could not listen on ``host:port`` now (binding as uvicorn does, with
    SO_REUSEADDR), or None when it could."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc
    return None


def wait_until_answering(
    url: str, process: subprocess.Popen, deadline: float
) -> Literal["ready", "exited", "timed out"]:
    """GET ``url`` every 0.1 s until it answers 200 ("ready"), ``process`` exits ("exited") or
    ``time.monotonic()`` passes ``deadline`` ("timed out")."""
    import httpx

    # One client for every try: each new one builds a TLS context, ~70 ms of CPU a try that a
    # model loading in another thread meanwhile waited for.
    with httpx.Client(timeout=2.0, verify=tls_context()) as http:
        while True:
            if process.poll() is not None:
                return "exited"
            try:
                if http.get(url).status_code == 200:
                    return "ready"
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                return "timed out"
            time.sleep(0.1)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every HTTP client of the process (for an https server): building
    one takes tens of ms."""
    return ssl.create_default_context()


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with temporary.open("xb") as file:  # permissions as for any new file (umask applies)
            file.write(text.encode("utf-8"))
            file.flush()
            os.fsync(file.fileno())  # the rename must not land before the data does
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


@contextmanager
def no_progress_bars() -> Iterator[None]:
    """transformers' per-file bars would tear through the CLI's spinner; silence them here."""
    from transformers.utils import logging as transformers_logging

    if not transformers_logging.is_progress_bar_enabled():
        yield
        return
    transformers_logging.disable_progress_bar()
    try:
        yield
    finally:
        transformers_logging.enable_progress_bar()
