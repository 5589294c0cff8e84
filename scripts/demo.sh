#!/usr/bin/env bash
# `make demo`: the built-in default end to end, on this machine, with no API key.
# Lists the environments, serves textcraft over HTTP and drives it with `agentgym env check`.
set -euo pipefail
PORT="${1:-36008}"
AGENTGYM=.venv/bin/agentgym

$AGENTGYM env list
$AGENTGYM env serve textcraft --port "$PORT" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null || true' EXIT
$AGENTGYM env check "http://127.0.0.1:$PORT" --env textcraft --item 12 --steps 10 --timeout 60
