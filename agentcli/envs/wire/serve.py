"""Serve one environment: the entry point child processes run, without the CLI.

    python -m agentcli.envs.wire.serve textcraft --port 36008 [--host 127.0.0.1]
        [--max-sessions 256] [--idle-timeout SECONDS]

``agentgym env serve`` and this entry point resolve the same ``ServeConfig`` (its defaults,
``AGENTGYM_*`` variables and ``.env`` below these options) and call the same
``agentcli.envs.wire.server.serve``. The launcher spawns this one, so that starting a server for a
rollout does not go through (and load) the command layer above the environments.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from agentcli.config import resolve_config
from agentcli.envs.wire.server import ServeConfig, serve
from agentcli.errors import AgentGymError
from agentcli.quick_exit import quick_exit

EXIT_INTERRUPTED = 130


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m agentcli.envs.wire.serve",
        description="Serve an environment over HTTP, wire-compatible with AgentGym's servers.",
    )
    parser.add_argument("env", help="Environment to serve (see `agentgym env list`).")
    parser.add_argument("--port", type=int, help="TCP port (default: the env's usual port).")
    parser.add_argument("--host", help="Interface to bind (default: 127.0.0.1).")
    parser.add_argument("--max-sessions", type=int, help="Live sessions at most (default: 256).")
    parser.add_argument(
        "--idle-timeout",
        type=float,
        help="Seconds before an unused session is closed (default: never; a full server closes"
        " one unused for 5 min to make room).",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    arguments = _arguments(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    try:
        config = resolve_config(
            ServeConfig,
            cli={
                "env": arguments.env,
                "port": arguments.port,
                "host": arguments.host,
                "max_sessions": arguments.max_sessions,
                "idle_timeout_s": arguments.idle_timeout,
            },
        )
        serve(config)
    except AgentGymError as exc:  # one line in the server's log, as the CLI would print it
        if os.environ.get("AGENTGYM_DEBUG", "") not in ("", "0", "false"):
            raise
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:  # Ctrl-C or a launcher's SIGINT, which uvicorn re-raises once stopped
        quick_exit(EXIT_INTERRUPTED)  # a launcher waits for this process, not for its teardown


if __name__ == "__main__":
    main()
