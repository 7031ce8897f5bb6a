#!/bin/sh
# dlcomm's rooted-collective latency on mpi against the OSU method.
# For each transport (shared memory: Open MPI's default; tcp: --mca btl
# self,tcp --mca btl_tcp_if_include lo), collective and size, runs the OSU-method
# reference (tests/bench/osu_rooted.c) and `dlcomm sweep --placement out -n
# ITERS` twice (-a mean and -a max) REPS times, alternating, and prints the
# medians: OSU's Avg Latency against dlcomm -a mean's time_us.mean, and OSU's
# Max Latency (the slowest rank's mean) against dlcomm's default (-a max:
# the slowest rank of each call, then the mean; >= OSU's max by definition),
# and the same ratios of the fastest runs (the minimum over the REPS runs of
# each figure): on a shared, oversubscribed host the median carries other
# jobs' load, the minimum less of it.
#
#   BUILD=build REPS=5 NP=2 ./scripts/bench-osu.sh
#   SIZES="8 1K 64K", ITERS=5000, WARMUP=100, TRANSPORTS="shm tcp"
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
REPS=${REPS:-5}
NP=${NP:-2}
SIZES=${SIZES:-"8 1K 64K"}
ITERS=${ITERS:-5000}
WARMUP=${WARMUP:-100}
TRANSPORTS=${TRANSPORTS:-"shm tcp"}
if [ "${NOBUILD:-0}" != 1 ]; then # NOBUILD=1: measure the binaries already in $BUILD
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$BUILD" -j "$(nproc)" --target dlcomm bench_osu_rooted >/dev/null 2>&1
fi
root=""
[ "$(id -u)" -ne 0 ] || root="--allow-run-as-root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

bytes() { # 64K -> 65536
  case $1 in
    *K) echo $(( ${1%K} * 1024 )) ;;
    *M) echo $(( ${1%M} * 1048576 )) ;;
    *) echo "$1" ;;
  esac
}

for tr in $TRANSPORTS; do
  mca=""
  # tcp over loopback only: other interfaces (network-namespace rigs) may come and go.
  [ "$tr" = tcp ] && mca="--mca btl self,tcp --mca btl_tcp_if_include lo"
  # --bind-to none: with more ranks than cores, binding would pile ranks on one core.
  mpirun="mpirun $root --oversubscribe --bind-to none $mca -np $NP"
  for coll in broadcast reduce gather scatter; do
    osu=$coll
    [ "$coll" = broadcast ] && osu=bcast
    for size in $SIZES; do
      b=$(bytes "$size")
      rep=1
      while [ "$rep" -le "$REPS" ]; do
        $mpirun "$BUILD/tests/bench_osu_rooted" "$osu" "$b" "$ITERS" "$WARMUP" |
          awk -v t="$tr" -v c="$coll" -v s="$b" '/^osu/ { print t, c, s, "osu_avg", $10; print t, c, s, "osu_max", $14 }' >>"$tmp/raw"
        for agg in mean max; do
          $mpirun "$BUILD/dlcomm" sweep -c "$coll" -d float32 -o sum --placement out -a "$agg" \
            -n "$ITERS" -w "$WARMUP" -b "$b" -e "$b" -q --out "$tmp/run" >/dev/null
          python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["profiles"][0]["results"][0]
print(sys.argv[2], sys.argv[3], sys.argv[4], "dl_" + sys.argv[5], r["time_us"]["mean"])' \
            "$tmp/run/run.json" "$tr" "$coll" "$b" "$agg" >>"$tmp/raw"
        done
        rep=$((rep + 1))
      done
    done
  done
done

python3 - "$tmp/raw" "$NP" "$REPS" "$ITERS" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    tr, coll, size, kind, us = line.split()
    rows.setdefault((tr, coll, int(size)), {}).setdefault(kind, []).append(float(us))
print("%s ranks, %s calls per run, median of %s alternating runs each, us per call"
      % (sys.argv[2], sys.argv[4], sys.argv[3]))
print()
for label, f in (("median", statistics.median), ("fastest run (min)", min)):
    print("%s of the runs:" % label)
    print()
    print("| transport | collective | size | OSU avg | dlcomm -a mean | ratio | OSU max | dlcomm -a max | ratio |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for k in sorted(rows, key=lambda k: (k[0], k[1], k[2])):
        m = {n: f(v) for n, v in rows[k].items()}
        print("| %s | %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |" % (
            k[0], k[1], k[2], m["osu_avg"], m["dl_mean"], m["dl_mean"] / m["osu_avg"],
            m["osu_max"], m["dl_max"], m["dl_max"] / m["osu_max"]))
    print()
PY
