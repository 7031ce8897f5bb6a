#!/bin/sh
# What a batch costs when the backend runs in a worker per profile (the sim
# backend: its calls are a model, so what is timed is dlcomm's own cost:
# the socket round trips and the MPI agreements between batches).
# `dlcomm sweep --backend sim -n N` (a fixed count comes in batches of at
# most 10000 calls: N/10000 batches) REPS times, alternating with BEFORE (an
# older dlcomm, same arguments) when given; prints the medians of the row's
# timed_s (rank 0's host seconds over the timed batches) per batch, its
# setup_s, and the command's wall time.
#
#   BUILD=build BEFORE=/path/to/old/dlcomm REPS=9 NP=2 N=200000 ./scripts/bench-workers.sh
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
REPS=${REPS:-9}
NP=${NP:-2}
N=${N:-200000}
SIZE=${SIZE:-8}
root=""
[ "$(id -u)" -ne 0 ] || root="--allow-run-as-root"
mpirun="mpirun $root --oversubscribe --bind-to none -np $NP"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

one() { # one KIND BINARY
  t0=$(date +%s.%N)
  $mpirun "$2" sweep --backend sim --system h200-sxm-8 -p default -c allreduce -d float32 \
    -o sum --placement out -n "$N" -w 20 -b "$SIZE" -e "$SIZE" -q --overwrite \
    --out "$tmp/$1" >/dev/null
  t1=$(date +%s.%N)
  python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["profiles"][0]["results"][0]
b = -(-int(sys.argv[3]) // 10000)
print(sys.argv[2], r["timed_s"] / b * 1e6, r["setup_s"] * 1e6, float(sys.argv[5]) - float(sys.argv[4]))' \
    "$tmp/$1/run.json" "$1" "$N" "$t0" "$t1" >>"$tmp/raw"
}

rep=1
while [ "$rep" -le "$REPS" ]; do
  [ -z "${BEFORE:-}" ] || one before "$BEFORE"
  one after "$BUILD/dlcomm"
  rep=$((rep + 1))
done

python3 - "$tmp/raw" "$NP" "$N" "$REPS" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    kind, batch, setup, wall = line.split()
    rows.setdefault(kind, []).append((float(batch), float(setup), float(wall)))
print("%s ranks, sim backend in workers, -n %s, median of %s alternating runs" % tuple(sys.argv[2:5]))
print()
print("| build | timed_s per batch (us) | setup_s per case (us) | wall per run (s) |")
print("| --- | ---: | ---: | ---: |")
for kind in ("before", "after"):
    if kind in rows:
        v = rows[kind]
        print("| %s | %.0f | %.0f | %.2f |" % (kind, statistics.median(x[0] for x in v),
              statistics.median(x[1] for x in v), statistics.median(x[2] for x in v)))
PY
