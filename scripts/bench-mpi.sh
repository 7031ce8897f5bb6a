#!/bin/sh
# How much dlcomm's MPI path costs over a bare MPI_Allreduce loop.
# With NP ranks, at each size, runs the bare loop (tests/bench/bare_allreduce.c)
# and `dlcomm sweep -c allreduce --placement out -n ITERS` (same iterations,
# float32 sum) REPS times, alternating, and prints the medians: dlcomm's
# time_us.mean (what the tables print) and its back-to-back time (avg_us: the
# batch total / N, slowest rank), each against the bare loop's max over ranks
# of total/N. BEFORE=path/to/an/older/dlcomm runs that one too, in the same
# alternation, for a before/after on one host (its avg_us and its ratio).
#
#   BUILD=build REPS=9 NP=4 ./scripts/bench-mpi.sh
#   SIZES="8:20000 64K:2000 1M:200" (size:iterations pairs), WARMUP=20
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
REPS=${REPS:-9}
NP=${NP:-4}
SIZES=${SIZES:-"8:20000 64K:2000 1M:200"}
WARMUP=${WARMUP:-20}
if [ "${NOBUILD:-0}" != 1 ]; then # NOBUILD=1: measure the binaries already in $BUILD
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$BUILD" -j "$(nproc)" --target dlcomm bench_bare_allreduce >/dev/null 2>&1
fi
root=""
[ "$(id -u)" -ne 0 ] || root="--allow-run-as-root"
# --bind-to none: with more ranks than cores, binding would pile ranks on one core.
mpirun="mpirun $root --oversubscribe --bind-to none -np $NP"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

bytes() { # 64K -> 65536
  case $1 in
    *K) echo $(( ${1%K} * 1024 )) ;;
    *M) echo $(( ${1%M} * 1048576 )) ;;
    *) echo "$1" ;;
  esac
}

for pair in $SIZES; do
  size=${pair%%:*}; iters=${pair#*:}; b=$(bytes "$size")
  rep=1
  while [ "$rep" -le "$REPS" ]; do
    $mpirun "$BUILD/tests/bench_bare_allreduce" "$b" "$iters" "$WARMUP" |
      awk -v s="$b" '/^bytes/ { print "bare", s, $6 }' >>"$tmp/raw"
    $mpirun "$BUILD/dlcomm" sweep -c allreduce -d float32 -o sum --placement out \
      -n "$iters" -w "$WARMUP" -b "$b" -e "$b" -q --overwrite --out "$tmp/run" >/dev/null
    python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["profiles"][0]["results"][0]
print("mean", r["bytes"], r["time_us"]["mean"]); print("avg", r["bytes"], r["avg_us"])' \
      "$tmp/run/run.json" >>"$tmp/raw"
    if [ -n "${BEFORE:-}" ]; then
      $mpirun "$BEFORE" sweep -c allreduce -d float32 -o sum --placement out \
        -n "$iters" -w "$WARMUP" -b "$b" -e "$b" -q --overwrite --out "$tmp/before" >/dev/null
      python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["profiles"][0]["results"][0]
print("before", r["bytes"], r["avg_us"])' "$tmp/before/run.json" >>"$tmp/raw"
    fi
    rep=$((rep + 1))
  done
done

python3 - "$tmp/raw" "$NP" "$REPS" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    kind, size, us = line.split()
    rows.setdefault(int(size), {}).setdefault(kind, []).append(float(us))
print("%s ranks, median of %s alternating runs each, times in us per call" % (sys.argv[2], sys.argv[3]))
print()
before = any("before" in r for r in rows.values())
print("| size | bare loop | dlcomm avg_us | ratio | dlcomm time_us.mean | ratio |" +
      (" before avg_us | ratio |" if before else ""))
print("| ---: | ---: | ---: | ---: | ---: | ---: |" + (" ---: | ---: |" if before else ""))
for size in sorted(rows):
    m = {k: statistics.median(v) for k, v in rows[size].items()}
    line = "| %d | %.2f | %.2f | %.3f | %.2f | %.3f |" % (
        size, m["bare"], m["avg"], m["avg"] / m["bare"], m["mean"], m["mean"] / m["bare"])
    if before:
        line += " %.2f | %.3f |" % (m["before"], m["before"] / m["bare"])
    print(line)
PY
