#!/usr/bin/env python3
"""--split on the sim in workers: groups side by side share each node's NICs.

  split_sim.py DLCOMM MPIRUN [MPIRUN ARGS...]

8 processes model 2 nodes of 8 H200s (each process 2 of the 16 GPUs);
MOD:4 makes 4 groups of 4 GPUs, 2 on each node, so the 4 groups share each
node's eight 400 Gb/s NICs (384 GB/s modelled, 0.96 efficiency): each
group's all-reduce at 1 GiB is NIC-bound at a quarter of that, and every
group's row says so; report gives each group its curve. Standard library only."""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    dlcomm, mpirun = sys.argv[1], sys.argv[2:]
    out = os.path.join(tempfile.mkdtemp(prefix="dlcomm-split-sim-"), "run")
    cmd = mpirun + ["-np", "8", dlcomm, "sweep", "--backend", "sim", "--sim-nodes", "2", "-p",
                    "ring", "--split", "MOD:4", "-c", "allreduce", "-b", "1G", "-e", "1G", "-n",
                    "5", "--placement", "out", "-q", "--out", out]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    fails = []
    if p.returncode != 0:
        print(p.stdout[-2000:], p.stderr[-2000:])
        fails.append("exit %d" % p.returncode)
    else:
        run = json.load(open(os.path.join(out, "run.json")))
        prof = run["profiles"][0]
        rows = prof["results"]
        want = [[0, 4], [1, 5], [2, 6], [3, 7]]
        if run.get("split", {}).get("groups") != want:
            fails.append("groups %s" % run.get("split"))
        g = prof.get("backend_info", {}).get("split_group", {})
        if g != {"modelled_ranks": 4, "modelled_nodes": 2, "ranks_per_node": 2,
                 "groups_sharing_nics": 4}:
            fails.append("backend_info.split_group %s" % g)
        if sorted(r["group"] for r in rows) != [0, 1, 2, 3]:
            fails.append("groups of the rows %s" % [r.get("group") for r in rows])
        share = 8 * 400 / 8 * 0.96 / 4  # GB/s: a quarter of a node's NICs
        for r in rows:
            if r["ranks"] != 4 or r["group_ranks"] != want[r["group"]]:
                fails.append("group %d: ranks %s %s" % (r["group"], r["ranks"], r["group_ranks"]))
            if not 0.9 * share <= r["busbw_gbps"] <= share:
                fails.append("group %d: busbw %.1f GB/s, want up to a quarter of the NICs' %.0f"
                             % (r["group"], r["busbw_gbps"], share))
        # report: a curve per group, each saying its group
        rep = subprocess.run([dlcomm, "report", out, "--json"], capture_output=True, text=True)
        curves = json.loads(rep.stdout)["collectives"][0]["profiles"] if rep.returncode == 0 else []
        if [(c.get("group"), c["profile"]) for c in curves] != \
                [(g, "ring group %d" % g) for g in range(4)]:
            fails.append("report curves %s" % [(c.get("group"), c["profile"]) for c in curves])
    for f in fails:
        print("FAIL: " + f)
    if not fails:  # a failure keeps its output to look at
        shutil.rmtree(os.path.dirname(out), ignore_errors=True)
    print("ok" if not fails else "%d failures (output in %s)" % (len(fails), out))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
