#!/usr/bin/env bash
# bash scripts/gpu_check.sh   (on a machine with a CUDA GPU, after `make install`)
# What this project has measured only on CPU, measured on a GPU in one go (8 minutes at most,
# each check under its own timeout), then one table:
#   1. bench/train.py in bf16: tokens/s of `train bc` and of AgentGym's BC loop, and MFU
#      (PEAK_TFLOPS, default 989: dense bf16 of an H100/H200 SXM);
#   2. bench/rollout.py on the GPU: episodes/s of our decode loop against model.generate;
#   3. a rollout of SmolLM2 on textcraft with --policy vllm (vLLM installed into its own
#      venv, since it pins its own torch; skipped if it does not install);
#   4. one FSDP run of `train bc` with configs/accelerate/fsdp.yaml.
# Logs and outputs stay in WORK (default: a new temp dir). Without a GPU it stops at once.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
PY=${PYTHON:-.venv/bin/python}
AGENTGYM=${AGENTGYM:-$(dirname "$PY")/agentgym}
PEAK_TFLOPS=${PEAK_TFLOPS:-989}
export HF_HUB_OFFLINE=1

if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "gpu_check: no GPU here ($PY's torch sees no CUDA device): run it on a machine with a CUDA GPU and torch's CUDA build" >&2
  exit 2
fi
WORK=${WORK:-$(mktemp -d -t agentgym-gpu-check.XXXXXX)}
MODEL=$WORK/smollm2-135m
NAMES=() STATUSES=() RESULTS=() TIMES=()

# run NAME SECONDS COMMAND...: the command under a timeout, its output in WORK/NAME.log
run() {
  local name=$1 limit=$2 start status
  shift 2
  start=$(date +%s)
  timeout "$limit" "$@" >"$WORK/$name.log" 2>&1
  status=$?
  LAST_SECONDS=$(($(date +%s) - start))
  case $status in
    0) LAST_STATUS=ok ;;
    124) LAST_STATUS="timeout ${limit}s" ;;
    *) LAST_STATUS="failed ($status)" ;;
  esac
  [ $status -eq 0 ]
}

# row NAME RESULT: one line of the table, for the check run last
row() {
  NAMES+=("$1") STATUSES+=("$LAST_STATUS") RESULTS+=("$2") TIMES+=("${LAST_SECONDS}s")
}

# lines PATTERN FILE: the lines of FILE that match, joined with " / "
lines() { grep -E "$1" "$2" | paste -sd'|' | sed 's/|/ \/ /g'; }

echo "gpu_check: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | head -1), work in $WORK" >&2

run export 45 "$AGENTGYM" model smollm2 --out "$MODEL" || {
  row "export SmolLM2-135M" "see $WORK/export.log"
  MODEL=""
}

if [ -n "$MODEL" ]; then
  run train-bench 75 "$PY" bench/train.py --model "$MODEL" --dtype bf16 --peak-tflops "$PEAK_TFLOPS" \
    --tokens 60000 --episodes 200 --threads 8
  row "bench/train.py bf16 (MFU)" "$(lines '^(baseline|ours)|^ratio' "$WORK/train-bench.log")"

  run rollout-bench 75 "$PY" bench/rollout.py --device cuda --model "$MODEL" \
    --decoders generate,own --no-baseline --items 64 --concurrency 64
  row "bench/rollout.py cuda (own vs generate)" "$(lines '^engine|against' "$WORK/rollout-bench.log")"

  VLLM=$WORK/vllm/bin/vllm
  if [ ! -x "$VLLM" ]; then
    run vllm-install 120 bash -c "'$PY' -m venv '$WORK/vllm' && '$WORK/vllm/bin/pip' install --quiet vllm"
  fi
  if [ -x "$VLLM" ]; then
    run vllm-rollout 90 "$AGENTGYM" rollout --env textcraft --policy vllm --model "$MODEL" \
      --split test --limit 64 --concurrency 64 --out "$WORK/vllm-rollout" \
      "policy.command=[$VLLM, serve]" "policy.args=[--gpu-memory-utilization, '0.4', --enforce-eager]"
    row "rollout --policy vllm, 64 episodes" "$(lines '^textcraft:' "$WORK/vllm-rollout.log") (engine log: $WORK/vllm-rollout/vllm.log)"
  else
    LAST_STATUS=skipped
    row "rollout --policy vllm" "vllm did not install (see $WORK/vllm-install.log)"
  fi

  if run fsdp-data 60 bash -c "'$AGENTGYM' collect --env textcraft --split train --limit 32 \
      --out '$WORK/fsdp-run/demos.jsonl' && '$AGENTGYM' build-data --method bc --iter 0 --run '$WORK/fsdp-run'"; then
    run fsdp-train 75 "$AGENTGYM" train bc --data "$WORK/fsdp-run/iter0/data/bc.json" --model "$MODEL" \
      --out "$WORK/fsdp-model" --accelerate-config configs/accelerate/fsdp.yaml --num-processes 1
    row "train bc, configs/accelerate/fsdp.yaml" "$(lines '^bc:' "$WORK/fsdp-train.log")"
  else
    row "train bc, configs/accelerate/fsdp.yaml" "no data: see $WORK/fsdp-data.log"
  fi
fi

printf '\n%-40s %-14s %-6s %s\n' check status time result
FAILED=0
for i in "${!NAMES[@]}"; do
  printf '%-40s %-14s %-6s %s\n' "${NAMES[$i]}" "${STATUSES[$i]}" "${TIMES[$i]}" "${RESULTS[$i]}"
  case ${STATUSES[$i]} in ok | skipped) ;; *) FAILED=1 ;; esac
done
exit $FAILED
