#!/bin/sh
# The nccl backend's newer collectives and modes on one GPU, every result
# checked: gather, scatter, alltoallv (generated pattern, and a matrix
# file), -R 0/1/2, --split MOD:1 and -a max/mean/min/rank0. Run on the GPU host from the
# repository root after scripts/gpu-host-build.sh; writes modes.tgz (the
# logs and each run.json) and summary.txt under $OUT, in well under 2
# minutes. One rank: the data move through NCCL's self paths, but every
# call, registration and check runs.
#   OUT=/tmp/out ./scripts/gpu-modes.sh; cat $OUT/summary.txt
set -u
OUT=${OUT:-/tmp/dlcomm-modes}
BUILD=${BUILD:-build-gpu}
BIN=$BUILD/dlcomm
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0
root=""
[ "$(id -u)" -ne 0 ] || root="--allow-run-as-root"
MPI="mpirun $root -np 1 -x NCCL_NVLS_ENABLE"
W=$OUT/modes
mkdir -p "$W"
printf '4096\n' >"$W/matrix-1.txt" # rank 0 sends 4 KiB to itself

run() { # name, then sweep arguments; exit code in $W/NAME.rc
  name=$1; shift
  timeout 60 $MPI "$BIN" sweep --backend nccl -q --out "$W/$name" "$@" \
    >"$W/$name.out" 2>"$W/$name.err"
  echo $? >"$W/$name.rc"
}

COLLS="-c gather,scatter,alltoallv,allreduce -d float32,bfloat16,int8 -b 8 -e 16M -f 16"
run colls $COLLS --budget 0.02
run matrix -c alltoallv --matrix "$W/matrix-1.txt" -b 4K -e 4K -d float32,float16 -n 20
for r in 1 2; do
  run register$r -R $r $COLLS --budget 0.02
done
# --split MOD:1: one group of one GPU, through the group communicators,
# the lockstep relay and the per-group rows (every collective checked).
run split --split MOD:1 -c allreduce,allgather,broadcast,gather,scatter,alltoallv \
  -d float32,bfloat16 -b 8 -e 16M -f 16 --budget 0.02
for a in max mean min rank0; do
  run agg_$a -a $a -c gather,scatter,alltoallv,broadcast -b 8 -e 1M -f 32 --budget 0.02
done

python3 - "$W" >"$OUT/summary.txt" 2>&1 <<'PY'
import json, os, sys
w = sys.argv[1]
bad = 0
for name in sorted(n[:-3] for n in os.listdir(w) if n.endswith(".rc")):
    rc = int(open(os.path.join(w, name + ".rc")).read())
    try:
        run = json.load(open(os.path.join(w, name, "run.json")))
    except (OSError, ValueError) as e:
        err = [l for l in open(os.path.join(w, name + ".err")) if "dlcomm:" in l]
        print("%-10s FAIL rc %d, no run.json (%s); %s" % (name, rc, e, " | ".join(err[:3]).strip()))
        bad += 1
        continue
    p = run["profiles"][0]
    rows = p["results"]
    wrong = sum(r["wrong"] for r in rows)
    colls = sorted({r["collective"] for r in rows})
    info = p.get("backend_info", {})
    small = {r["collective"]: r["time_us"]["mean"] for r in rows
             if r["bytes_requested"] == rows[0]["bytes_requested"] and r["placement"] == "out"
             and r["dtype"] == rows[0]["dtype"]}
    ok = rc == 0 and wrong == 0 and rows
    if name.startswith("register"):  # the registration asked for is the one recorded
        ok = ok and info.get("register") == int(name[-1])
    if name == "split":  # one group of rank 0, every row saying so, every collective there
        ok = ok and run.get("split", {}).get("groups") == [[0]] and len(colls) == 6 \
            and all(r.get("group") == 0 and r.get("group_ranks") == [0] for r in rows)
    bad += not ok
    print("%-10s %s rc %d rows %d wrong %d registration=%s aggregate=%s colls=%s first-size us %s"
          % (name, "ok  " if ok else "FAIL", rc, len(rows), wrong, info.get("registration"),
             run["options"].get("aggregate"), ",".join(colls),
             " ".join("%s=%.2f" % kv for kv in sorted(small.items()))))
print("ALL OK" if not bad else "%d runs FAILED" % bad)
PY
cat "$OUT/summary.txt"
tar -czf "$OUT/modes.tgz" -C "$OUT" modes
rm -rf "$W"
