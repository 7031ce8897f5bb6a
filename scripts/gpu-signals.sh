#!/bin/sh
# The signal cases of tests/hardening on the nccl backend, on a GPU host:
# SIGTERM/SIGINT to mpirun and to dlcomm launch, SIGTERM to every process,
# SIGKILL/SIGSEGV to the worker, SIGTERM/SIGKILL to the rank, and a Ctrl-C
# at a terminal through dlcomm launch (one rank: NCCL refuses two on one
# GPU). Run from the repository root after scripts/gpu-host-build.sh;
# writes signals-nccl.txt under $OUT (one "ok"/"FAIL" line a case, about a
# minute).
#   OUT=/tmp/out ./scripts/gpu-signals.sh; tail -3 $OUT/signals-nccl.txt
set -u
OUT=${OUT:-/tmp/dlcomm-signals}
BUILD=${BUILD:-build-gpu}
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT"
root=""
[ "$(id -u)" -ne 0 ] || root="--allow-run-as-root"
python3 tests/hardening/hardening_test.py --bin "$BUILD/dlcomm" \
  --mpirun "mpirun $root -x NCCL_NVLS_ENABLE" --sig-backends nccl signals >"$OUT/signals-nccl.txt" 2>&1
rc=$?
echo "rc=$rc" >>"$OUT/signals-nccl.txt"
exit $rc
