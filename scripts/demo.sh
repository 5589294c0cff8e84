#!/usr/bin/env bash
# `make demo`: the quickstart (configs/quickstart.yaml), offline, on CPU, no API key.
# A 1.5M-parameter student learns BabyAI PutNextLocal from the env's expert (iteration 0);
# the expert then corrects the student's own episodes and the student learns from that
# (iteration 1), next to a matched control trained as long on the expert's own states.
# Everything lands in runs/quickstart/; rerunning resumes (finished stages are skipped).
set -euo pipefail
AGENTGYM=.venv/bin/agentgym
RUN=runs/quickstart

$AGENTGYM env list
[ -f "$RUN/student/config.json" ] || $AGENTGYM model tiny --hidden 128 --layers 4 --out "$RUN/student"
$AGENTGYM iterate --config configs/quickstart.yaml --iters 0-1
$AGENTGYM report "$RUN"
