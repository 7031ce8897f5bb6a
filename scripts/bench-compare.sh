#!/bin/sh
# Times `dlcomm compare` on two large synthetic runs: 10 profiles x 6
# collectives x 30 sizes (8 B .. 4 GiB) at 64 ranks, valid schema-1 run.json
# documents with per-rank arrays of 64 entries (about 1800 rows each).
#   scripts/bench-compare.sh [DLCOMM] [WORKDIR] [REPEATS]
# Prints the file sizes and the median wall time of REPEATS runs (default 7).
set -eu
bin=${1:-build/dlcomm}
work=${2:-/tmp/dlcomm-bench-compare}
reps=${3:-7}
mkdir -p "$work"
python3 - "$bin" "$work" "$reps" <<'PY'
import json, math, os, random, statistics, subprocess, sys, time

dlcomm, work, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
RANKS = 64
COLLS = {"allreduce": 2 * (RANKS - 1) / RANKS, "allgather": (RANKS - 1) / RANKS,
         "reducescatter": (RANKS - 1) / RANKS, "alltoall": (RANKS - 1) / RANKS,
         "broadcast": 1.0, "reduce": 1.0}

def run(seed, slow):
    rnd = random.Random(seed)
    hosts = [{"name": "node%02d" % h, "cpu": "x", "cores": 64, "kernel": "Linux", "os": "Debian 12",
              "ranks": list(range(h * 8, h * 8 + 8))} for h in range(8)]
    doc = {"schema": 1, "tool": "dlcomm", "tool_version": "0.1.0", "command": "dlcomm sweep",
           "started": "2026-12-02T00:00:00Z", "exit_code": 0, "options": {},
           "fingerprint": {"hosts": hosts, "ranks": RANKS, "nodes": 8, "ranks_per_host": 8,
                           "mpi": {"library": "Open MPI v4.1.4", "standard": "3.1"}},
           "environment": {}, "profiles": []}
    for p in range(10):
        prof = {"name": "profile-%d" % p, "backend": "nccl", "modelled": False, "status": "ok",
                "results": []}
        for coll, factor in COLLS.items():
            for e in range(3, 33):
                b = 1 << e
                t = 20 + b / 40e3 * (1 + 0.05 * p)            # us: latency + bandwidth
                if slow and rnd.random() < 0.02:
                    t *= 1.3
                t *= 1 + rnd.gauss(0, 0.005)
                ci = t * 0.004
                alg = b / (t * 1e3)
                prof["results"].append({
                    "collective": coll, "dtype": "float32",
                    "op": "sum" if coll in ("allreduce", "reducescatter", "reduce") else "none",
                    "root": 0 if coll in ("broadcast", "reduce") else -1, "placement": "out",
                    "bytes_requested": b, "bytes": b, "count": b // 4, "ranks": RANKS,
                    "iterations": 200, "converged": True,
                    "time_us": {"mean": t, "p50": t, "p95": t * 1.01, "p99": t * 1.02,
                                "min": t * 0.99, "max": t * 1.05, "stdev": ci * 7, "ci95": ci},
                    "avg_us": t, "algbw_gbps": alg, "busbw_gbps": alg * factor,
                    "busbw_factor": factor, "wrong": 0, "wrong_per_rank": [0] * RANKS,
                    "rank_time_us": [t * (1 - 0.001 * r) for r in range(RANKS)]})
        doc["profiles"].append(prof)
    return doc

paths = []
for name, seed, slow in (("base", 1, False), ("new", 2, True)):
    path = os.path.join(work, name, "run.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(run(seed, slow), f, indent=1)
    paths.append(path)
rows = sum(len(p["results"]) for p in json.load(open(paths[0]))["profiles"])
times = []
for _ in range(reps):
    t0 = time.perf_counter()
    p = subprocess.run([dlcomm, "compare", paths[0], paths[1]], capture_output=True, text=True)
    times.append(time.perf_counter() - t0)
    if p.returncode not in (0, 1):
        sys.exit("compare failed: " + p.stderr)
summary = [l for l in p.stdout.splitlines() if l.startswith("compared")]
print("rows per run: %d; run.json sizes: %.1f MB, %.1f MB" % (
    rows, os.path.getsize(paths[0]) / 1e6, os.path.getsize(paths[1]) / 1e6))
print(summary[0] if summary else p.stdout)
print("compare wall time over %d runs: median %.3f s (min %.3f, max %.3f)" % (
    reps, statistics.median(times), min(times), max(times)))
PY
