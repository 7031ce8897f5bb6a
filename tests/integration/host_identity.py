#!/usr/bin/env python3
"""One idea of a host, NCCL's (docs/shared-gpu.md), with real mpirun ranks.

  host_identity.py DLCOMM MPIRUN [MPIRUN ARGS...]

- DLCOMM_SHARED_GPU=1: 4 ranks of one machine are 4 hosts (HOSTNAME/rN),
  each with its machine named, and the job counts 4 nodes;
- NCCL_HOSTID per rank (an MPMD line): ranks with the same id are one host;
- preflight in that mode names the slow rank's host alone (HOSTNAME/r2);
- a bad DLCOMM_SHARED_GPU value: exit 2, one line, nothing written.
Standard library only."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

fails = []


def run(cmd, env=None, timeout=180):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)


def hosts_of(out):
    fp = json.load(open(os.path.join(out, "run.json")))["fingerprint"]
    return fp["nodes"], [(h["name"], h.get("machine"), h["ranks"]) for h in fp["hosts"]]


def main():
    dlcomm, mpirun = sys.argv[1], sys.argv[2:]
    tmp = tempfile.mkdtemp(prefix="dlcomm-hostid-")
    me = socket.gethostname()
    sweep = ["sweep", "--backend", "mpi", "-c", "allreduce", "-b", "8", "-e", "64", "-n", "3", "-q"]

    out = os.path.join(tmp, "shared")
    p = run(mpirun + ["-x", "DLCOMM_SHARED_GPU", "-np", "4", dlcomm] + sweep + ["--out", out],
            {"DLCOMM_SHARED_GPU": "1"})
    want = [("%s/r%d" % (me, r), me, [r]) for r in range(4)]
    if p.returncode != 0:
        fails.append("shared: exit %d: %s" % (p.returncode, p.stderr[-500:]))
    elif hosts_of(out) != (4, want):
        fails.append("shared: hosts %s, want 4 %s" % (hosts_of(out), want))
    elif "host %s/r2: rank 2" % me not in p.stdout:
        fails.append("shared: the header does not name host %s/r2" % me)

    out = os.path.join(tmp, "ids")
    app = lambda hid: ["-np", "1", "env", "NCCL_HOSTID=" + hid, dlcomm] + sweep + ["--out", out]
    p = run(mpirun + app("a") + [":"] + app("a") + [":"] + app("b"))
    want = [("a", me, [0, 1]), ("b", me, [2])]
    if p.returncode != 0:
        fails.append("NCCL_HOSTID: exit %d: %s" % (p.returncode, p.stderr[-500:]))
    elif hosts_of(out) != (2, want):
        fails.append("NCCL_HOSTID: hosts %s, want 2 %s" % (hosts_of(out), want))

    js = os.path.join(tmp, "pf.json")
    p = run(mpirun + ["-x", "DLCOMM_SHARED_GPU", "-x", "DLCOMM_INJECT", "-np", "4", dlcomm,
                      "preflight", "--backend", "mpi", "--quick", "--json", js],
            {"DLCOMM_SHARED_GPU": "1", "DLCOMM_INJECT": "slow:2:*:4"})
    verdict = [l for l in p.stdout.splitlines() if l.startswith("VERDICT")]
    if p.returncode != 1 or not verdict or "hosts=%s/r2 " % me not in verdict[-1] + " ":
        fails.append("preflight: exit %d, %s" % (p.returncode, verdict or p.stderr[-500:]))

    out = os.path.join(tmp, "bad")
    p = run(mpirun + ["-x", "DLCOMM_SHARED_GPU", "-np", "2", dlcomm] + sweep + ["--out", out],
            {"DLCOMM_SHARED_GPU": "yes"})
    lines = sorted({l for l in p.stderr.splitlines() if l.startswith("dlcomm:")})
    if p.returncode != 2 or len(lines) != 1 or "DLCOMM_SHARED_GPU=yes" not in lines[0] \
            or os.path.exists(out):
        fails.append("bad value: exit %d, %s" % (p.returncode, lines))

    # A real record from the GPU host (4 ranks on one H200, each its own NCCL
    # host): report and its page say what the figures are, and NCCL's choice.
    ref = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "results",
                       "reference", "h200-multirank", "call1", "smoke-4ranks-run.json")
    page = os.path.join(tmp, "report.html")
    p = run([dlcomm, "report", ref, "--html", page])
    html = open(page).read() if os.path.exists(page) else ""
    for want in ("shared-GPU socket figures", "TREE/LL/1 at 8 B-256 B -> RING/LL/1 at 8 KiB",
                 "HOROVOD_FUSION_THRESHOLD: not judged: shared-GPU"):
        if want not in p.stdout:
            fails.append("report of the H200 record: no '%s'" % want)
    if "shared-GPU socket figures" not in html:
        fails.append("the report page does not say shared-GPU socket figures")

    for f in fails:
        print("FAIL: " + f)
    if not fails:  # a failure keeps its work to look at
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok" if not fails else "%d failures (work in %s)" % (len(fails), tmp))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
