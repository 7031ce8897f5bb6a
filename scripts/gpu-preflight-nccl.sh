#!/bin/sh
# preflight through NCCL on the GPU host (after scripts/gpu-host-build.sh):
# a healthy --quick run, then an injected hang and an injected slow rank.
# Writes $OUT/pf-*.json and $OUT/pf-nccl.txt (each run's output, exit code
# and time). One GPU: one rank, so the outlier rules have no peers to judge
# a slow rank by; its figures are recorded. About 1 minute.
set -u
OUT=${OUT:-/tmp/dlcomm-pf}
BUILD=${BUILD:-build-gpu}
BIN=$(cd "$(dirname "$BUILD/dlcomm")" && pwd)/dlcomm
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT"
run() { # NAME INJECT ARGS...
  name=$1 inj=$2
  shift 2
  echo "== $name: DLCOMM_INJECT=$inj preflight $*"
  t0=$(date +%s.%N)
  DLCOMM_INJECT=$inj mpirun --allow-run-as-root -np 1 -x DLCOMM_INJECT -x NCCL_NVLS_ENABLE \
    "$BIN" preflight "$@" --json "$OUT/pf-$name.json" 2>&1 | grep -v '^\s*$'
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "took %.1f s\n", b - a }'
}
{
  run quick "" --backend nccl --quick
  run hang hang:0 --backend nccl --quick --timeout 20
  run slow slow:0:*:3 --backend nccl --quick
} > "$OUT/pf-nccl.txt" 2>&1
cat "$OUT/pf-nccl.txt"
