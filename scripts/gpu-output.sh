#!/bin/sh
# What a person reads, on the GPU host (after scripts/gpu-host-build.sh):
# a 1-rank nccl sweep's header (the backend auto chose and why, rank 0's
# GPU by bus id, versions with the driver) and footer (wrong elements,
# busbw, rows not converged, where the files went), the same with
# --format nccl-tests beside nccl-tests' own all_reduce_perf when it is on
# PATH (the header lines byte for byte, and `dlcomm compare` of the run
# with its own log), and a 1-rank nccl preflight --quick (no rank to judge
# among: the straggler check SKIPs; no baseline: the verdict WARNs and
# names the next step). BACKEND=mpi runs the same checks on a host without
# a GPU (the GPU's own lines are then not asked for).
# Writes $OUT/output-check.txt; exit 1 when a check fails. About 30 s.
set -u
OUT=${OUT:-/tmp/dlcomm-output}
BUILD=${BUILD:-build-gpu}
BACKEND=${BACKEND:-nccl}
BIN=$(cd "$(dirname "$BUILD/dlcomm")" && pwd)/dlcomm
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT"
LOG=$OUT/output-check.txt
W=$(mktemp -d /tmp/dlcomm-output.XXXXXX)
M="mpirun --allow-run-as-root --oversubscribe -np 1"
fails=0
check() { # check WHAT FILE PATTERN: the extended regex must match a line of FILE
  grep -Eq "$3" "$2" || { echo "FAIL: $1 (no line matching /$3/ in $2)"; fails=$((fails + 1)); }
}
{
  echo "== dlcomm sweep (auto) -q"
  $M "$BIN" sweep -b 8 -e 64M -q --out "$W/run" >"$W/q.txt" 2>&1
  cat "$W/q.txt"
  if [ "$BACKEND" = nccl ]; then
    check "auto chose nccl, saying why" "$W/q.txt" '^# backend nccl \(auto -> nccl: it works here\)$'
    check "rank 0's GPU by bus id" "$W/q.txt" '^# host .*: rank 0 -> 0:[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:'
    check "the driver's version" "$W/q.txt" '^# versions: .*; driver [0-9]'
  else
    check "auto fell back to mpi, saying why" "$W/q.txt" '^# backend mpi \(auto -> mpi: nccl: '
  fi
  check "the footer's figures" "$W/q.txt" '^# profile [^:]+: ok, [0-9]+ rows; 0 wrong elements; busbw avg '
  check "where the files went" "$W/q.txt" "^# wrote $W/run/run.json and $W/run/run.csv"
  [ "$(grep -cv '^#' "$W/q.txt")" -eq 0 ] || { echo "FAIL: -q printed table rows"; fails=$((fails + 1)); }

  echo "== dlcomm sweep --format nccl-tests"
  $M "$BIN" sweep -c allreduce -b 8 -e 64M --format nccl-tests --out "$W/nt" >"$W/nt.txt" 2>&1
  cat "$W/nt.txt"
  check "nccl-tests' headers" "$W/nt.txt" '^#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong $'
  if command -v all_reduce_perf >/dev/null 2>&1; then
    echo "== all_reduce_perf -b 8 -e 64M -f 2 -g 1"
    all_reduce_perf -b 8 -e 64M -f 2 -g 1 >"$W/real.txt" 2>&1
    cat "$W/real.txt"
    grep -A2 'out-of-place' "$W/real.txt" >"$W/real-h.txt"
    grep -A2 'out-of-place' "$W/nt.txt" >"$W/nt-h.txt"
    cmp -s "$W/real-h.txt" "$W/nt-h.txt" || { echo "FAIL: headers differ from nccl-tests'"; diff "$W/real-h.txt" "$W/nt-h.txt"; fails=$((fails + 1)); }
  else
    echo "(no all_reduce_perf on PATH: headers checked against nccl-tests 2.19.6's, as in tests/)"
  fi
  echo "== dlcomm compare RUN ITS-LOG"
  "$BIN" compare "$W/nt" "$W/nt.txt" --json "$W/cmp.json" >"$W/cmp.txt" 2>&1
  cat "$W/cmp.txt"
  python3 - "$W/cmp.json" "$W/nt/run.json" <<'PY' || fails=$((fails + 1))
import json, sys
c, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
n = sum(len(p["results"]) for p in r["profiles"])
if len(c["rows"]) != n:
    sys.exit(f"FAIL: compare paired {len(c['rows'])} of {n} rows of the run and its own log")
PY

  echo "== dlcomm preflight --quick"
  $M "$BIN" preflight --quick --json "$W/pf.json" >"$W/pf.txt" 2>&1
  cat "$W/pf.txt"
  check "one rank: no straggler test" "$W/pf.txt" '^SKIP straggler +rank +- +fewer than 3 ranks'
  check "no baseline: a WARN naming the next step" "$W/pf.txt" '^VERDICT (WARN|FAIL) .*--baseline RUN or --system NAME|^VERDICT FAIL'
  echo "== $fails failed check(s)"
} >"$LOG" 2>&1
rm -rf "$W"
cat "$LOG"
[ "$fails" -eq 0 ]
