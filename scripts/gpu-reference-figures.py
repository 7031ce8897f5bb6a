#!/usr/bin/env python3
"""Prints the figures of a gpu-reference.sh run: the ones the reference note
and the one-GPU targets quote. Usage: gpu-reference-figures.py REFDIR"""
import json
import os
import statistics
import sys

ref = sys.argv[1]


def load(name):
    path = os.path.join(ref, name, "run.json")
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"{name}: no run.json ({e})")
        return None


def rows(run, **match):
    for p in run.get("profiles", []):
        for r in p.get("results", []):
            if all(r.get(k) == v or p.get(k) == v for k, v in match.items()):
                yield p, r


def small_median(run, coll, stat="mean"):
    t = [r["time_us"][stat] for _, r in rows(run, collective=coll, placement="out")
         if r["bytes"] <= 1024]
    return statistics.median(t) if t else float("nan")


def where_time_went(run):
    """The worker's start, then per row: setup (fill, check, warm-up), the
    timed batches on the host clock, and the GPU time inside them."""
    for p in run.get("profiles", []):
        t = p.get("timing", {})
        nan = float("nan")
        rs = p.get("results", [])
        setup = sum(r.get("setup_s", 0) for r in rs)
        timed = sum(r.get("timed_s", 0) for r in rs)
        gpu = sum(r["time_us"]["mean"] * r["iterations"] for r in rs) / 1e6
        info = p.get("backend_info", {})
        print(f"  {p['name']}: worker start: (CUDA driver {info.get('probe_s', nan):.2f} s, "
              f"backend {info.get('init_s', nan):.2f} s of which communicator "
              f"{info.get('comm_init_s', nan):.2f} s)")
        print(f"  {p['name']}: worker start {t.get('startup_s', nan):.2f} s, cases and teardown "
              f"{t.get('run_s', nan):.2f} s, exit {t.get('exit_s', nan):.2f} s, profile "
              f"{t.get('total_s', nan):.2f} s; rows: setup {setup:.2f} s, timed {timed:.2f} s "
              f"of which GPU-timed {gpu:.2f} s")


def wall(name):
    try:
        return open(os.path.join(ref, name + ".wall")).read().strip()
    except OSError:
        return "?"


sweeps = sorted(d for d in os.listdir(ref)
                if d.startswith(("sweep", "graph")) and os.path.isdir(os.path.join(ref, d)))
for name in sweeps:
    run = load(name)
    if not run:
        continue
    print(f"{name}: wall {wall(name)} s, exit {run.get('exit_code')}")
    for coll in ("allreduce", "allgather", "broadcast"):
        print(f"  {coll:10s} median out-of-place time 8 B..1 KiB: {small_median(run, coll):.2f} us"
              f" (p50 {small_median(run, coll, 'p50'):.2f})")
    big = [r for _, r in rows(run, collective="allreduce", placement="out")]
    if big:
        top = max(big, key=lambda r: r["bytes"])
        print(f"  allreduce {top['bytes']} B: algbw {top['algbw_gbps']:.1f} GB/s, "
              f"time {top['time_us']['mean']:.1f} us, ci95 {top['time_us']['ci95']:.2f} us, "
              f"{top['iterations']} iterations")
    wrong = sum(r["wrong"] for _, r in rows(run))
    n = sum(1 for _ in rows(run))
    conv = sum(1 for _, r in rows(run) if r.get("converged"))
    print(f"  {n} rows, {wrong} wrong, {conv} converged to the CI target")
    where_time_went(run)

for name in ("profiles", "hang"):
    run = load(name)
    if not run:
        continue
    print(f"{name}: wall {wall(name)} s, exit {run.get('exit_code')}")
    for p in run["profiles"]:
        obs = p.get("observed") or p.get("nccl") or {}
        print(f"  {p['name']:10s} status {p.get('status')} {p.get('reason', '')} "
              f"rows {len(p.get('results', []))} observed {json.dumps(obs)[:200]}")
