#!/usr/bin/env bash
# `make demo`: what agentgym does today on the built-in default (textcraft), offline, on CPU.
# Serves textcraft and checks it over HTTP, collects expert demos, builds a tiny model,
# evaluates it, clones the demos into it (behavioral cloning) and evaluates it again.
# Outputs land in runs/demo/.
set -euo pipefail
PORT="${1:-36008}"
AGENTGYM=.venv/bin/agentgym
RUN=runs/demo

$AGENTGYM env list
$AGENTGYM env serve textcraft --port "$PORT" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null || true' EXIT
$AGENTGYM env check "http://127.0.0.1:$PORT" --env textcraft --item 12 --steps 10 --timeout 60

$AGENTGYM collect --env textcraft --env-server "http://127.0.0.1:$PORT" --split train --limit 100 \
  --concurrency 16 --out "$RUN/demos.jsonl"
$AGENTGYM model tiny --out "$RUN/models/tiny"
# An untrained model: near-zero success is the point of comparison for training later.
$AGENTGYM eval --env textcraft --env-server "http://127.0.0.1:$PORT" --model "$RUN/models/tiny" \
  --split test --limit 20 --concurrency 20 --max-rounds 5 --out "$RUN/eval-untrained"

# Behavioral cloning on the demos (AgentGym's format), then the same eval. A model this small,
# from scratch, learns the format long before it learns to craft: the loss is the thing to see.
$AGENTGYM build-data --method bc --iter 0 --run "$RUN"
$AGENTGYM train bc --task textcraft --data "$RUN/iter0/data/bc.json" --model "$RUN/models/tiny" \
  --out "$RUN/iter0/model" --epochs 2 --lr 1e-3 --resume
$AGENTGYM eval --env textcraft --env-server "http://127.0.0.1:$PORT" --model "$RUN/iter0/model" \
  --split test --limit 20 --concurrency 20 --max-rounds 5 --out "$RUN/eval-bc"
