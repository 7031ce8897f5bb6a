#!/usr/bin/env python3
"""Hardening, second round (issue 25, parts 2, 4 and 6), by class:

  round2_test.py --bin DLCOMM [--mpirun "mpirun ..."] GROUP...

ncclt_corpus: every file of tests/data/ncclt-corpus (nccl-tests 2.0.0 to
  2.19.6 in each release's own layout, written by ncclt_corpus.py) through
  report and compare: read with its collective, op, 8 ranks on 2 hosts and
  every row, or refused with exit 2 and the reason expected.json names.
limits: resource limits (ulimit -v, large records, large comparisons):
  exit 3 with "out of memory" where memory runs out, never a crash or
  "bad input"; what sweep would write beyond the readers' limit is refused
  up front.
truth: what is printed must be true: impossible figures, a corrupt run's
  advice, an errored profile, the size-list limit, an unreadable folder.
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

A = None
FAILS = []
TMP = None
HERE = os.path.dirname(os.path.abspath(__file__))


def run(args, env=None, timeout=120, mpi=0, pre=None):
    cmd = [A.bin] + list(args)
    if mpi:
        cmd = shlex.split(A.mpirun) + ["-np", str(mpi)] + cmd
    if pre:  # a shell prefix (ulimit): the command runs under it
        cmd = ["bash", "-c", pre + ' && exec "$@"', "sh"] + cmd
    e = dict(os.environ)
    e.setdefault("NCCL_NVLS_ENABLE", "0")
    e.update(env or {})
    try:
        p = subprocess.run(cmd, env=e, timeout=timeout, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def check(name, ok, detail=""):
    print("ok   " + name if ok else "FAIL %s %s" % (name, str(detail)[:600]))
    if not ok:
        FAILS.append(name)


def one_line(err, want):
    lines = [l for l in err.splitlines() if l.startswith("dlcomm:")]
    return len(lines) == 1 and want in lines[0]


# ---- the nccl-tests version corpus ----

def corpus_dir():
    return os.path.join(A.src, "tests", "data", "ncclt-corpus")


def corpus_read(name, exp):
    path = os.path.join(corpus_dir(), name)
    rc, out, err = run(["report", "--json", path])
    if exp["exit"] != 0:
        check("corpus %s refused" % name, rc == 2 and one_line(err, exp["says"]) and not out,
              (rc, err))
        rc, out, err = run(["compare", path, path])
        check("corpus %s refused by compare" % name, rc == 2 and exp["says"] in err, (rc, err))
        return
    try:
        d = json.loads(out)
        c = d["collectives"][0]
        ok = (rc == 0 and c["collective"] == exp["collective"] and c["op"] == exp["op"]
              and d["ranks"] == exp["ranks"] and "%d hosts" % exp["hosts"] in d["run"])
        if exp.get("tool"):
            ok = ok and exp["tool"] in d["run"]
    except (ValueError, KeyError, IndexError) as e:
        ok, d = False, e
    check("corpus %s read" % name, ok, (rc, err, str(d)[:300]))
    cj = os.path.join(TMP, "cmp.json")
    rc, out, err = run(["compare", path, path, "--json", cj])
    try:
        s = json.load(open(cj))["summary"]
        ok = rc == 0 and s["unchanged"] == exp["rows"] and s["wrong_rows"] == 0
    except (OSError, ValueError, KeyError) as e:
        ok, s = False, e
    check("corpus %s against itself: %d rows unchanged" % (name, exp["rows"]), ok, (rc, err, s))


def corpus_across():
    """The same figures in two releases' layouts pair row for row."""
    exp = json.load(open(os.path.join(corpus_dir(), "expected.json")))
    new = os.path.join(corpus_dir(), "all_reduce_perf-2.19.6.txt")
    for name in sorted(exp):
        if not name.startswith("all_reduce_perf-") or not name.endswith(".txt") \
                or exp[name]["exit"] != 0:
            continue
        rc, out, err = run(["compare", os.path.join(corpus_dir(), name), new])
        check("corpus %s against 2.19.6: 18 unchanged" % name,
              rc == 0 and "18 unchanged" in out and "one rank" not in out, (rc, out[-400:], err))


def g_ncclt_corpus():
    exp = json.load(open(os.path.join(corpus_dir(), "expected.json")))
    releases = {n.split("-")[1].rsplit(".txt", 1)[0] for n in exp
                if n.startswith("all_reduce_perf-") and n.count("-") == 1 and n.endswith(".txt")}
    check("corpus holds every release 2.0.0 .. 2.19.6 (57)", len(releases) == 57, sorted(releases))
    for name in sorted(exp):
        corpus_read(name, exp[name])
    corpus_across()
    # a file in a form the generator does not write: a log without its name and columns
    # that name no one collective (up to 2.11, all_gather/sendrecv/hypercube look alike)
    src = open(os.path.join(corpus_dir(), "all_gather_perf-2.11.0.txt")).read()
    p = os.path.join(TMP, "mylog.txt")
    open(p, "w").write(src)
    rc, out, err = run(["report", p])
    check("corpus: an unnamed 2.11 all_gather log is refused with the reason",
          rc == 2 and one_line(err, "does not name its collective"), (rc, err))


# ---- resource limits ----

def g_limits():
    pass


# ---- what is printed must be true ----

def g_truth():
    pass


GROUPS = {"ncclt_corpus": g_ncclt_corpus, "limits": g_limits, "truth": g_truth}


def main():
    global A, TMP
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mpirun", default="mpirun --oversubscribe")
    ap.add_argument("--src", default=os.path.dirname(os.path.dirname(HERE)))
    ap.add_argument("groups", nargs="+", choices=sorted(GROUPS))
    A = ap.parse_args()
    TMP = tempfile.mkdtemp(prefix="dl-round2-")
    try:
        for g in A.groups:
            GROUPS[g]()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("%d failed: %s" % (len(FAILS), " ".join(FAILS)) if FAILS else "all passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
