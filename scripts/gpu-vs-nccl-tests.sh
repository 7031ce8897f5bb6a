#!/bin/sh
# dlcomm against nccl-tests on one GPU host, interleaved, from the
# repository root after scripts/gpu-host-build.sh (dlcomm in $BUILD):
#   1. builds nccl-tests from its source tarball ($NT_TAR, default
#      .deps/nccl-tests.tar.gz: `git archive` of NVIDIA/nccl-tests), MPI off;
#   2. three rounds of all_reduce_perf, all_gather_perf, broadcast_perf
#      (-b 8 -e 4G -f 2 -g 1) and one dlcomm sweep of the same three
#      collectives in the default mode (both placements, as nccl-tests
#      measures), out-of-place only (--placement out), each timed whole, then
#      the same sweep with nccl-tests' fixed counts (-w 5 -n 20: wall only);
#   3. one rank entering each call late (DLCOMM_INJECT=slow:0) and the same
#      sweep unfaulted: each row's rank_late_us and stragglers, side by side.
# DL_ARGS (word-split) is added to every dlcomm sweep of step 2, e.g.
# DL_ARGS="--ci-target 0.03" to measure another stop rule against the same
# nccl-tests rounds.
# Writes to $OUT (default /tmp/dlcomm-vs): side-by-side.txt (the table, the
# goal's verdicts, both tools' wall times), side-by-side.json, straggler.txt,
# host.txt and raw.tgz (every output). Exit 3 when a step broke.
set -u
OUT=${OUT:-/tmp/dlcomm-vs}
BUILD=${BUILD:-build-gpu}
BIN=$BUILD/dlcomm
NT_TAR=${NT_TAR:-.deps/nccl-tests.tar.gz}
NT=${NT:-/tmp/nccl-tests-src}
DL_ARGS=${DL_ARGS:-}
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0
root=""
[ "$(id -u)" -ne 0 ] || root="--allow-run-as-root"
MPI="mpirun $root -np 1"
RAW=$OUT/raw
rm -rf "$RAW"
mkdir -p "$RAW"
[ -x "$BIN" ] || { echo "gpu-vs-nccl-tests.sh: $BIN missing: run scripts/gpu-host-build.sh first" >&2; exit 3; }
[ -f "$NT_TAR" ] || { echo "gpu-vs-nccl-tests.sh: $NT_TAR missing (git archive of NVIDIA/nccl-tests)" >&2; exit 3; }

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version 2>/dev/null | tail -n 1
  $BIN version
  echo "nccl-tests tarball: $(sha256sum "$NT_TAR" | cut -c1-16)"
} >"$OUT/host.txt" 2>&1

echo "== building nccl-tests"
t0=$(date +%s)
rm -rf "$NT"
mkdir -p "$NT"
tar xzf "$NT_TAR" -C "$NT" || exit 3
[ -x /opt/gcc/bin/g++ ] && export NVCC_PREPEND_FLAGS="-ccbin /opt/gcc/bin/g++"
if ! make -C "$NT" -j "$(nproc)" MPI=0 NCCL_HOME=/usr CUDA_HOME=/usr/local/cuda \
     NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" >"$RAW/nt-build.log" 2>&1; then
  tail -n 20 "$RAW/nt-build.log"
  tar czf "$OUT/raw.tgz" -C "$OUT" raw
  exit 3
fi
echo "built in $(( $(date +%s) - t0 )) s"

timed() { # TOOL ROUND FILE command...: runs it bounded, appends its wall to walls.txt
  tool=$1 round=$2 file=$3
  shift 3
  a=$(date +%s.%N)
  timeout 240 "$@" >"$file" 2>&1
  rc=$?
  b=$(date +%s.%N)
  w=$(echo "$a $b" | awk '{printf "%.3f", $2-$1}')
  echo "$tool $round $w" >>"$RAW/walls.txt"
  echo "$tool round $round $(basename "$file"): rc=$rc wall=$w s"
  [ $rc -eq 0 ] || echo "$tool $round rc=$rc" >>"$RAW/failed.txt"
}

echo "== three rounds, interleaved"
for i in 1 2 3; do
  for b in all_reduce all_gather broadcast; do
    timed nccl-tests "$i" "$RAW/nt-$b-$i.txt" "$NT/build/${b}_perf" -b 8 -e 4G -f 2 -g 1
  done
  timed dlcomm-default "$i" "$RAW/dld-$i.out" $MPI -x NCCL_NVLS_ENABLE $BIN sweep --backend nccl \
    -c allreduce,allgather,broadcast -b 8 -e 4G $DL_ARGS --out "$RAW/dld-$i"
  timed dlcomm "$i" "$RAW/dl-$i.out" $MPI -x NCCL_NVLS_ENABLE $BIN sweep --backend nccl \
    -c allreduce,allgather,broadcast -b 8 -e 4G --placement out $DL_ARGS --out "$RAW/dl-$i"
  timed dlcomm-fixed "$i" "$RAW/dlf-$i.out" $MPI -x NCCL_NVLS_ENABLE $BIN sweep --backend nccl \
    -c allreduce,allgather,broadcast -b 8 -e 4G --placement out -w 5 -n 20 $DL_ARGS --out "$RAW/dlf-$i"
done

echo "== a rank entering each call late (slow:0), and unfaulted"
for k in slow none; do
  if [ $k = slow ]; then inj="slow:0:*:4"; else inj=""; fi
  DLCOMM_INJECT=$inj timeout 120 $MPI -x NCCL_NVLS_ENABLE -x DLCOMM_INJECT $BIN sweep \
    --backend nccl -c allreduce -b 8 -e 64M -f 8 --placement out --out "$RAW/late-$k" \
    >"$RAW/late-$k.out" 2>&1
  echo "late-$k: rc=$?"
done
python3 - "$RAW" >"$OUT/straggler.txt" <<'PY'
import json, os, sys
raw = sys.argv[1]
def rows(k):
    try:
        with open(os.path.join(raw, "late-%s" % k, "run.json")) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        return None, str(e)
    return d, {int(r["bytes"]): r for p in d["profiles"] for r in p["results"]}
slow, rs = rows("slow")
none, rn = rows("none")
if slow is None or none is None:
    print("no run.json: %s / %s" % (rs, rn))
    sys.exit(0)
print("one rank, DLCOMM_INJECT=slow:0:*:4 against unfaulted: rank 0's lateness (us) after")
print("the barrier, the row's mean and p50 (us); one rank names no straggler (the MAD rule")
print("needs three), so this records the figures")
print("%10s %12s %12s %10s %10s %10s %10s" % ("bytes", "late slow", "late none", "mean slow",
                                             "mean none", "p50 slow", "p50 none"))
for b in sorted(rs):
    a, n = rs[b], rn.get(b)
    if not n:
        continue
    print("%10d %12.2f %12.2f %10.2f %10.2f %10.2f %10.2f" % (
        b, a["rank_late_us"][0], n["rank_late_us"][0], a["time_us"]["mean"],
        n["time_us"]["mean"], a["time_us"]["p50"], n["time_us"]["p50"]))
print("stragglers (slow run): %r; rows' stragglers: %r" % (
    slow.get("stragglers"), sorted({i for r in rs.values() for i in r.get("stragglers", [])})))
PY
cat "$OUT/straggler.txt"

echo "== the table"
python3 scripts/side-by-side.py "$RAW" "$OUT/side-by-side.json" >"$OUT/side-by-side.txt"
rc=$?
cat "$OUT/side-by-side.txt"
[ -f "$RAW/failed.txt" ] && rc=3
tar czf "$OUT/raw.tgz" -C "$OUT" raw && rm -rf "$RAW"
[ $rc -eq 0 ] || exit 3
