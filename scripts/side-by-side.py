#!/usr/bin/env python3
"""Side-by-side table of dlcomm against nccl-tests, from the raw outputs
scripts/gpu-vs-nccl-tests.sh writes:
    RAW/nt-COLL-ROUND.txt        nccl-tests' text output (COLL: all_reduce, ...)
    RAW/dl-ROUND/run.json        dlcomm sweep's record
    RAW/walls.txt                lines "TOOL ROUND SECONDS" (TOOL: nccl-tests, dlcomm, dlcomm-fixed)
Usage: side-by-side.py RAW [JSON_OUT]
Prints, per collective and size, the median over rounds of each tool's
out-of-place time (us) and the ratio dlcomm / nccl-tests, then the goal's
verdicts and both tools' median wall times. Exit 2 (one line) when RAW
holds no usable output."""
import glob
import json
import os
import re
import statistics
import sys

COLLS = {"all_reduce": "allreduce", "all_gather": "allgather", "broadcast": "broadcast"}
MIB = 1 << 20


def nccl_tests_times(path):
    """{bytes: out-of-place time in us} from nccl-tests' text: rows of
    size count type redop root time algbw busbw #wrong [in-place ...]."""
    out = {}
    with open(path, errors="replace") as f:
        for line in f:
            w = line.split()
            if len(w) < 9 or line.lstrip().startswith("#") or not w[0].isdigit():
                continue
            try:
                out[int(w[0])] = float(w[5])
            except ValueError:
                continue
    return out


def dlcomm_times(path):
    """{coll: {bytes: mean time in us}} of the out-of-place rows."""
    with open(path) as f:
        run = json.load(f)
    out = {}
    for p in run.get("profiles", []):
        for r in p.get("results", []):
            if r.get("placement") == "out":
                out.setdefault(r["collective"], {})[int(r["bytes"])] = r["time_us"]["mean"]
    return out


def medians(per_round):
    """[{size: t}] over rounds -> {size: median}."""
    sizes = set().union(*per_round) if per_round else set()
    return {s: statistics.median([r[s] for r in per_round if s in r]) for s in sizes}


def fmt_size(b):
    for unit, n in (("G", 1 << 30), ("M", MIB), ("K", 1 << 10)):
        if b >= n and b % n == 0:
            return "%d%s" % (b // n, unit)
    return str(b)


def main():
    if len(sys.argv) not in (2, 3):
        sys.stderr.write("usage: side-by-side.py RAW [JSON_OUT]\n")
        return 2
    raw = sys.argv[1]
    nt = {}
    for nt_name in COLLS:
        files = sorted(glob.glob(os.path.join(raw, "nt-%s-*.txt" % nt_name)))
        rounds = [t for t in (nccl_tests_times(f) for f in files) if t]
        if rounds:
            nt[COLLS[nt_name]] = medians(rounds)
    dl_rounds = [dlcomm_times(f) for f in sorted(glob.glob(os.path.join(raw, "dl-*", "run.json")))]
    dl = {c: medians([r[c] for r in dl_rounds if c in r]) for c in COLLS.values()}
    if not nt or not any(dl.values()):
        sys.stderr.write("side-by-side.py: %s: no nccl-tests or no dlcomm output there\n" % raw)
        return 2
    rows, verdict = [], {}
    print("%-10s %10s %12s %12s %8s" % ("collective", "bytes", "nccl-tests", "dlcomm", "ratio"))
    for coll in COLLS.values():
        small, large = [], []
        for size in sorted(set(nt.get(coll, {})) | set(dl.get(coll, {}))):
            a, b = nt.get(coll, {}).get(size), dl.get(coll, {}).get(size)
            ratio = b / a if a and b else None
            rows.append({"collective": coll, "bytes": size, "nccl_tests_us": a, "dlcomm_us": b,
                         "ratio": ratio})
            print("%-10s %10s %12s %12s %8s" % (
                coll, fmt_size(size), "%.2f" % a if a else "-", "%.2f" % b if b else "-",
                "%.3f" % ratio if ratio else "-"))
            if ratio is not None and size <= MIB:
                small.append(ratio)
            if ratio is not None and size >= 64 * MIB:
                large.append(ratio)
        verdict[coll] = {
            "max_ratio_to_1MiB": max(small) if small else None,
            "ratio_range_from_64MiB": [min(large), max(large)] if large else None,
            "small_ok": bool(small) and max(small) <= 1.00,
            "large_ok": bool(large) and all(abs(r - 1) <= 0.01 for r in large),
        }
    walls = {}
    wpath = os.path.join(raw, "walls.txt")
    if os.path.exists(wpath):
        with open(wpath) as f:
            for line in f:
                w = line.split()
                if len(w) == 3:
                    walls.setdefault(w[0], {}).setdefault(w[1], 0.0)
                    walls[w[0]][w[1]] += float(w[2])  # a round's binaries add up
    wall_med = {t: statistics.median(r.values()) for t, r in walls.items()}
    print()
    for coll, v in verdict.items():
        print("%-10s ratio <= 1.00 up to 1 MiB: %s (max %s); within 1%% from 64 MiB: %s (%s)" % (
            coll, "yes" if v["small_ok"] else "NO",
            "%.3f" % v["max_ratio_to_1MiB"] if v["max_ratio_to_1MiB"] else "-",
            "yes" if v["large_ok"] else "NO",
            "%.3f..%.3f" % tuple(v["ratio_range_from_64MiB"]) if v["ratio_range_from_64MiB"]
            else "-"))
    wr = None
    if "nccl-tests" in wall_med and "dlcomm" in wall_med:
        wr = wall_med["dlcomm"] / wall_med["nccl-tests"]
        print("wall (median of rounds): nccl-tests %.2f s (three binaries), dlcomm %.2f s; "
              "ratio %.2f (goal <= 0.5: %s)" % (wall_med["nccl-tests"], wall_med["dlcomm"], wr,
                                               "yes" if wr <= 0.5 else "NO"))
    if "nccl-tests" in wall_med and "dlcomm-default" in wall_med:
        wd = wall_med["dlcomm-default"] / wall_med["nccl-tests"]
        print("wall of the default sweep (both placements, as nccl-tests): dlcomm %.2f s; "
              "ratio %.2f (goal <= 0.5: %s); %s" % (wall_med["dlcomm-default"], wd,
                                                  "yes" if wd <= 0.5 else "NO", convergence(raw)))
    spent = where_it_went(raw, walls.get("dlcomm-default", {}))
    if spent:
        print("where the default sweep's wall went (s, median over rounds): %s" % "; ".join(
            "%s %.2f" % (k, v) for k, v in spent.items()))
    if "nccl-tests" in wall_med and "dlcomm-fixed" in wall_med:
        print("wall with nccl-tests' fixed counts (-w 5 -n 20, no CI stop): dlcomm %.2f s; ratio %.2f"
              % (wall_med["dlcomm-fixed"], wall_med["dlcomm-fixed"] / wall_med["nccl-tests"]))
    if len(sys.argv) == 3:
        with open(sys.argv[2], "w") as f:
            json.dump({"rows": rows, "verdict": verdict, "wall_s": wall_med, "wall_ratio": wr,
                       "default_wall_parts_s": spent,
                       "rounds": {"nccl-tests": len(walls.get("nccl-tests", {})),
                                  "dlcomm": len(dl_rounds)}}, f, indent=1)
    return 0


def where_it_went(raw, walls):
    """The default-mode runs' wall time in parts, each the median over rounds:
    the worker's start (CUDA, NCCL's communicator), the rows' fill, check and
    warm-up, their timed batches, the rest of the rows (the spread and arrival
    passes, the supervisor's round trips), the worker's exit, and what lies
    outside the profile (mpirun, MPI's and the CUDA driver's start in the
    supervisor, writing the record, MPI's end). {} without such runs."""
    parts = {}
    for rnd, wall in walls.items():
        path = os.path.join(raw, "dld-%s" % rnd, "run.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            run = json.load(f)
        profs = run.get("profiles", [])
        t = [p.get("timing", {}) for p in profs]
        rows = [r for p in profs for r in p.get("results", [])]
        total = sum(x.get("total_s", 0) for x in t)
        run_s = sum(x.get("run_s", 0) for x in t)
        setup = sum(r.get("setup_s", 0) for r in rows)
        timed = sum(r.get("timed_s", 0) for r in rows)
        got = {"wall": wall, "worker start": sum(x.get("startup_s", 0) for x in t),
               "fill, check, warm-up": setup, "timed batches": timed,
               "rest of the rows": run_s - setup - timed,
               "worker exit": sum(x.get("exit_s", 0) for x in t), "outside the profile": wall - total}
        for k, v in got.items():
            parts.setdefault(k, []).append(v)
    return {k: statistics.median(v) for k, v in parts.items()}


def convergence(raw):
    """Rows of the default-mode runs that did not converge, and why (run.json's stop)."""
    rows, why = 0, {}
    for d in sorted(os.listdir(raw)):
        path = os.path.join(raw, d, "run.json")
        if not d.startswith("dld-") or not os.path.exists(path):
            continue
        with open(path) as f:
            run = json.load(f)
        for p in run.get("profiles", []):
            for r in p.get("results", []):
                rows += 1
                if not r.get("converged", True):
                    why[r.get("stop", "?")] = why.get(r.get("stop", "?"), 0) + 1
    return "%d rows, %d not converged %s" % (rows, sum(why.values()), why or "")


if __name__ == "__main__":
    sys.exit(main())
