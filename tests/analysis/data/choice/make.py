"""Makes base.json and new.json: two hand-made run.json files of an 8-GPU
NCCL all-reduce (profiles default and ring), as before and after an NCCL
upgrade whose tuner changes its choice at 1 MiB and 4 MiB (Tree/LL128 ->
Tree/Simple, Ring/LL128 -> Tree/Simple), where forcing ring is then faster.
The figures are invented for the tests (tests/analysis/choice_test.py);
python3 make.py rewrites both files."""
import json

SIZES = [64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
# size index -> (time_us, algo, proto, nchannels); None: the row does not say
BASE_DEFAULT = [(20, "Tree", "LL", 4), (30, "Tree", "LL128", 8), (50, "Tree", "LL128", 8),
                (110, "Ring", "LL128", 16), (330, "Ring", "Simple", 16), (1200, "Ring", "Simple", 32)]
NEW_DEFAULT = [(20, "Tree", "LL", 4), (30, "Tree", "LL128", 8), (62, "Tree", "Simple", 8),
               (140, "Tree", "Simple", 16), (330, "Ring", "Simple", 16), (1200, "Ring", "Simple", 32)]
RING = [(26, "Ring", "LL", 4), (38, "Ring", "LL128", 8), (51, "Ring", "LL128", 8),
        (111, "Ring", "LL128", 16), (331, "Ring", "Simple", 16), (1201, "Ring", "Simple", 32)]


def row(size, t, algo, proto, nch, mixed=False):
    algbw = size / t / 1e3
    r = {"collective": "allreduce", "dtype": "float32", "op": "sum", "root": -1,
         "placement": "out", "bytes_requested": size, "bytes": size, "count": size // 4,
         "ranks": 8, "processes": 8, "iterations": 200, "converged": True, "stop": "ci",
         "time_us": {"mean": t, "p50": t, "p95": t * 1.01, "p99": t * 1.02, "min": t * 0.99,
                     "max": t * 1.03, "stdev": t * 0.02, "ci95": t * 0.003},
         "avg_us": t, "algbw_gbps": algbw, "busbw_gbps": algbw * 1.75, "busbw_factor": 1.75,
         "setup_s": 0.001, "timed_s": 0.01, "wrong": 0, "wrong_per_rank": [0] * 8,
         "algo": algo, "proto": proto, "nchannels": nch, "choice_from": "profiler"}
    if mixed:
        r["choice_mixed"] = True
    return r


def profile(name, env, intent, rows, mixed_at=None):
    return {"name": name, "backend": "nccl", "modelled": False, "status": "ok", "env": env,
            "intent": intent,
            "results": [row(s, *v, mixed=(i == mixed_at)) for i, (s, v) in enumerate(zip(SIZES, rows))]}


def run(nccl, started, default, mixed_at=None):
    return {"schema": 1, "tool": "dlcomm", "tool_version": "0.1.0", "started": started,
            "command": "dlcomm sweep -p default,ring -c allreduce -b 64K -e 64M -f 4",
            "versions": {"dlcomm": "0.1.0", "backends": ["nccl", "mpi", "sim"],
                         "built_with": {"mpi": "Open MPI v4.1.4", "nccl": nccl, "cuda": "12.4"},
                         "runtime": {"mpi": "Open MPI v4.1.4", "nccl": nccl,
                                     "cuda_runtime": "12.4", "cuda_driver": "12.4"}},
            "fingerprint": {"hosts": [{"name": "gpu1", "ranks": list(range(8))}], "ranks": 8,
                            "nccl": {"version": nccl},
                            "nodes": 1, "ranks_per_host": 8},
            "environment": {}, "backend": {"name": "nccl", "why": "asked for"},
            "stragglers": [], "exit_code": 0,
            "profiles": [profile("default", {}, {"transport": "any"}, default, mixed_at),
                         profile("ring", {"NCCL_ALGO": "Ring"}, {"algo": "Ring"}, RING)]}


for name, doc in (("base.json", run("2.21.5", "2026-11-01T10:00:00Z", BASE_DEFAULT)),
                  ("new.json", run("2.23.4", "2026-12-01T10:00:00Z", NEW_DEFAULT, mixed_at=5))):
    with open(name, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
