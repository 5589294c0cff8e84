#!/usr/bin/env bash
# `make demo`: the quickstart (configs/quickstart.yaml), offline, on CPU, no API key.
# A 1.5M-parameter student learns BabyAI PutNextLocal from the env's expert (iteration 0);
# the expert then corrects the student's own episodes and the student learns from that
# (iteration 1), next to a matched control trained as long on the expert's own states.
# Everything lands in runs/quickstart/seed0/; rerunning resumes (finished stages are skipped).
# It ends with this run's numbers beside the seeds README.md's table was made from.
set -euo pipefail
AGENTGYM=.venv/bin/agentgym

$AGENTGYM env list
$AGENTGYM iterate --config configs/quickstart.yaml --iters 0-1 --seed 0
$AGENTGYM report runs/quickstart --published docs/results/quickstart.json
