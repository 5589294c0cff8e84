"""A TCP proxy on loopback that resets the connection of chosen requests, as a server closing
an idle keep-alive connection (or anything between) does to the request that meets it."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from agentcli.common import free_port


@contextmanager
def dropping_proxy(target_port: int, *, drop: bytes, nth: set[int]) -> Iterator[str]:
    """Forward loopback connections to ``target_port``; reset, unforwarded, the connection of
    the requests that begin with ``drop`` and are the ``nth`` of those (1 is the first).
    Yields the proxy's base URL."""
    listener = socket.create_server(("127.0.0.1", free_port()))
    seen = {"count": 0}
    lock = threading.Lock()

    def pipe(source: socket.socket, sink: socket.socket, *, inspect: bool) -> None:
        try:
            while chunk := source.recv(65536):
                if inspect and chunk.startswith(drop):
                    with lock:
                        seen["count"] += 1
                        dropped = seen["count"] in nth
                    if dropped:  # RST, not FIN: linger 0 then close
                        source.setsockopt(
                            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                        )
                        break
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                end.close()

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", target_port))
            threading.Thread(target=pipe, args=(client, upstream), kwargs={"inspect": True},
                             daemon=True).start()  # fmt: skip
            threading.Thread(target=pipe, args=(upstream, client), kwargs={"inspect": False},
                             daemon=True).start()  # fmt: skip

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
