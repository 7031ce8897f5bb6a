#!/usr/bin/env python3
"""Hardening, second round (issue 25, parts 2, 4 and 6), by class:

  round2b_test.py --bin DLCOMM [--mpirun "mpirun ..."] GROUP...

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
import signal
import subprocess
import sys
import tempfile

A = None
FAILS = []
TMP = None
HERE = os.path.dirname(os.path.abspath(__file__))


def run(args, env=None, timeout=120, mpi=0, pre=None, wrap=None):
    cmd = (wrap or []) + [A.bin] + list(args)
    if mpi:
        cmd = shlex.split(A.mpirun) + ["-np", str(mpi)] + cmd
    if pre:  # a shell prefix (ulimit): the command runs under it
        cmd = ["bash", "-c", pre + ' && exec "$@"', "sh"] + cmd
    e = dict(os.environ)
    e.setdefault("NCCL_NVLS_ENABLE", "0")
    e.update(env or {})
    p = subprocess.Popen(cmd, env=e, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out.decode(errors="replace"), err.decode(errors="replace")
    except subprocess.TimeoutExpired:  # the whole group: mpirun and its ranks
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
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
        ok = ok and d["profiles"][0]["status"] == exp.get("status", "ok")
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
                or exp[name]["exit"] != 0 or exp[name].get("status"):
            continue
        rc, out, err = run(["compare", os.path.join(corpus_dir(), name), new])
        check("corpus %s against 2.19.6: 18 unchanged" % name,
              rc == 0 and "18 unchanged" in out and "one rank" not in out, (rc, out[-400:], err))


def corpus_several():
    """A log holding several runs (a CI or Slurm log) is read as several
    runs: LOG@K names one, compare pairs two of them, history lists each."""
    exp = json.load(open(os.path.join(corpus_dir(), "expected.json")))
    twice = sorted(n for n in exp if n.endswith("-twice.txt"))
    check("corpus has logs holding two runs", len(twice) >= 5, twice)
    for name in twice:
        log = os.path.join(corpus_dir(), name)
        rc1, _, e1 = run(["report", log + "@1"])
        rc2, _, e2 = run(["report", log + "@2"])
        rc3, _, e3 = run(["report", log + "@3"])
        check("corpus %s: @1 and @2 read, @3 refused" % name,
              rc1 == 0 and rc2 == 0 and rc3 == 2 and one_line(e3, "holds 2 nccl-tests runs"),
              (rc1, e1, rc2, e2, rc3, e3))
        rc, out, err = run(["compare", log + "@1", log + "@2"])
        check("corpus %s: its second run, 50%% slower, is a regression" % name,
              rc == 1 and "50.0% worse" in out, (rc, out[-300:], err))
    d = os.path.join(TMP, "cilog")
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(corpus_dir(), twice[-1]), os.path.join(d, "all_reduce_perf.log"))
    rc, out, err = run(["history", d])
    check("history lists both runs of one log, the slower last",
          rc == 0 and "history: 2 runs" in out
          and "last run against the one before: regression" in out, (rc, out[-600:], err))


def g_ncclt_corpus():
    exp = json.load(open(os.path.join(corpus_dir(), "expected.json")))
    releases = {n.split("-")[1].rsplit(".txt", 1)[0] for n in exp
                if n.startswith("all_reduce_perf-") and n.count("-") == 1 and n.endswith(".txt")}
    check("corpus holds every release 2.0.0 .. 2.19.6 (57)", len(releases) == 57, sorted(releases))
    for name in sorted(exp):
        corpus_read(name, exp[name])
    corpus_across()
    corpus_several()
    old = os.path.join(corpus_dir(), "all_reduce_perf-2.11.0.txt")
    rc, out, err = run(["compare", old, os.path.join(corpus_dir(), "all_reduce_perf-2.11.0-oob.txt")])
    check("corpus: a 2.11 log whose own check failed (out of bounds) fails compare",
          rc == 1 and "out-of-bounds" in out, (rc, out[-300:], err))
    # a file in a form the generator does not write: a log without its name and columns
    # that name no one collective (up to 2.11, all_gather/sendrecv/hypercube look alike)
    src = open(os.path.join(corpus_dir(), "all_gather_perf-2.11.0.txt")).read()
    p = os.path.join(TMP, "mylog.txt")
    open(p, "w").write(src)
    rc, out, err = run(["report", p])
    check("corpus: an unnamed 2.11 all_gather log is refused with the reason",
          rc == 2 and one_line(err, "does not name its collective"), (rc, err))


# ---- resource limits ----

def limits_threads():
    """A thread dlcomm cannot start (under a thread or memory limit) ends the
    job with exit 3 and a line, never a crash or a run left unwatched."""
    if not A.fail_threads:
        check("limits: threads (no --fail-threads shim given)", False)
        return
    for allow, what in ((0, "watchdog"), (1, "interrupt thread")):
        out = os.path.join(TMP, "threads-%d" % allow)
        pre = ["-x", "LD_PRELOAD=" + A.fail_threads, "-x", "DL_FAIL_THREADS=%d" % allow]
        cmd = shlex.split(A.mpirun) + ["-np", "2"] + pre + [A.bin, "sweep", "--backend", "mpi",
                                                           "-b", "1K", "-e", "64K", "-c",
                                                           "allreduce", "-q", "--out", out]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        err = p.stderr.decode(errors="replace")
        check("limits: sweep whose %s cannot start exits 3 with a line" % what,
              p.returncode == 3 and "dlcomm: error: cannot start the" in err, (p.returncode, err[-500:]))
    cmd = shlex.split(A.mpirun) + ["-np", "2", "-x", "LD_PRELOAD=" + A.fail_threads, "-x",
                                   "DL_FAIL_THREADS=0", A.bin, "preflight", "--quick", "--json",
                                   os.path.join(TMP, "pf.json")]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    err = p.stderr.decode(errors="replace")
    check("limits: preflight whose watchdog cannot start exits 3 with a line",
          p.returncode == 3 and "cannot start the watchdog thread" in err, (p.returncode, err[-500:]))


def big_run(rows):
    """A valid run.json of `rows` rows (a real 2-rank row, its size varied), written row by row."""
    doc = good_run()
    row = doc["profiles"][0]["results"][0]
    doc["profiles"][0]["results"] = []
    head = json.dumps(doc, indent="\t")
    cut = head.index('"results": []') + len('"results": [')
    os.makedirs(os.path.join(TMP, "big-%d" % rows), exist_ok=True)
    path = os.path.join(TMP, "big-%d" % rows, "run.json")
    with open(path, "w") as f:
        f.write(head[:cut])
        for k in range(rows):
            row["bytes"] = row["bytes_requested"] = 4 * (k + 1)
            row["count"] = k + 1
            f.write(("," if k else "") + json.dumps(row, indent="\t"))
        f.write(head[cut:])
    return path


def run_limited(args, vm_kb):
    """rc, stderr and peak resident KB of dlcomm args under ulimit -v vm_kb (None: no limit)."""
    pre = "ulimit -v %d" % vm_kb if vm_kb else "true"
    p = subprocess.Popen(["bash", "-c", pre + ' && exec "$@"', "sh", A.bin] + args,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, err, ru.ru_maxrss


def least_vm(args):
    """The smallest address-space limit (KB, to 8 MB) under which dlcomm args still ends 0."""
    lo, hi = 50000, 4000000
    if run_limited(args, hi)[0] != 0:
        return None
    while hi - lo > 8192:
        mid = (lo + hi) // 2
        if run_limited(args, mid)[0] == 0:
            hi = mid
        else:
            lo = mid
    return hi


def limits_memory():
    small = os.path.join(TMP, "good", "run.json")
    big = big_run(50000)
    size_kb = os.path.getsize(big) // 1024
    # reading takes at most 3x the file (the text itself, and the rows)
    rc, err, base_kb = run_limited(["report", small], None)
    rc, err, rss_kb = run_limited(["report", big], None)
    check("limits: report of a %d MB run.json takes at most 3x its size (%d MB resident over "
          "a small run's %d MB)" % (size_kb >> 10, (rss_kb - base_kb) >> 10, base_kb >> 10),
          rc == 0 and rss_kb - base_kb <= 3 * size_kb, (rc, err[-300:]))
    # out of memory while reading: said as such, exit 3 (never "not valid JSON", 2)
    floor = least_vm(["report", small])
    if floor is None:
        check("limits: report of a small run under a generous ulimit -v", False)
        return
    for args in (["report", big], ["compare", big, small], ["compare", small, big],
                 ["history", os.path.dirname(big)]):
        rc, err, _ = run_limited(args, floor + 16384)
        check("limits: %s out of memory while reading says so, exit 3" % args[0],
              rc == 3 and "out of memory" in err and "not valid" not in err, (rc, err[-300:]))
    os.unlink(big)


def limits_record():
    """What sweep would write beyond what its readers take is refused up front."""
    out = os.path.join(TMP, "too-big")
    rc, so, err = run(["sweep", "--backend", "sim", "-b", "1K", "-e", "55000K", "-i", "1K", "-c",
                       "allreduce,allgather,broadcast", "--out", out], mpi=2, timeout=60)
    check("limits: a plan whose run.json passes 256 MiB is refused before it runs",
          rc == 2 and "256 MiB" in err and "run.json" in err and not os.path.exists(out),
          (rc, err[-400:]))


def g_limits():
    good_run()
    limits_threads()
    limits_memory()
    limits_record()


# ---- what is printed must be true ----

def good_run():
    out = os.path.join(TMP, "good")
    if not os.path.exists(os.path.join(out, "run.json")):
        rc, _, err = run(["sweep", "--backend", "mpi", "-b", "1K", "-e", "1M", "-c", "allreduce",
                          "-q", "--out", out], mpi=2)
        if rc != 0:
            raise SystemExit("the 2-rank sweep the truth cases start from failed: %s" % err)
    return json.load(open(os.path.join(out, "run.json")))


def write_run(name, doc):
    path = os.path.join(TMP, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def truth_impossible():
    """Impossible figures are refused, never turned into a change or advice."""
    for tag, key, val in (("negative mean", "mean", -3), ("zero mean", "mean", 0),
                          ("busbw 1e300", "busbw_gbps", 1e300), ("negative algbw", "algbw_gbps", -1),
                          ("negative ci95", "ci95", -0.5)):
        doc = good_run()
        r = doc["profiles"][0]["results"][2]
        if key in ("mean", "ci95"):
            r["time_us"][key] = val
        else:
            r[key] = val
        bad = write_run("impossible", doc)
        base = os.path.join(TMP, "good")
        for args in (["compare", base, bad], ["compare", bad, base], ["report", bad]):
            rc, out, err = run(args)
            check("truth: %s refused by %s" % (tag, " ".join(args[:1] + ["NEW" if args[-1] == bad
                                                                           else "BASE"])),
                  rc == 2 and one_line(err, "which no measurement gives") and "%" not in out,
                  (rc, out[-300:], err))
    # the same in nccl-tests -J JSON
    src = json.load(open(os.path.join(A.src, "tests", "data", "ncclt-corpus",
                                      "all_reduce_perf-2.19.6.json")))
    src["results"][3]["out_of_place"]["bus_bw"] = 1e300
    rc, out, err = run(["report", write_run("nt-huge", src)])
    check("truth: nccl-tests JSON busbw 1e300 refused", rc == 2 and one_line(
        err, "which no measurement gives"), (rc, err))


def report_json(path):
    rc, out, err = run(["report", "--json", path])
    try:
        return rc, {a["name"]: a for a in json.loads(out)["advice"]}, err
    except (ValueError, KeyError):
        return rc, {}, err


def truth_report():
    doc = good_run()
    p = doc["profiles"][0]
    p["status"], p["reason"] = "wrong", "rank 1 returned wrong elements"
    for r in p["results"]:
        r["wrong"] = 3
    rc, adv, err = report_json(write_run("corrupt", doc))
    a = adv.get("HOROVOD_FUSION_THRESHOLD", {})
    check("truth: a corrupt run gives no Horovod advice", rc == 0 and not a.get("value")
          and "failed their check" in a.get("why", ""), (rc, a, err))
    doc = good_run()
    p = doc["profiles"][0]
    p["status"], p["reason"], p["results"] = "error", "NCCL init failed", []
    rc, adv, err = report_json(write_run("errored", doc))
    a = adv.get("HOROVOD_FUSION_THRESHOLD", {})
    check("truth: a run whose only profile errored says so", rc == 0
          and "ended error" in a.get("why", "") and "NCCL init failed" in a.get("why", "")
          and "no all-reduce in this run" not in a.get("why", ""), (rc, a, err))
    log = os.path.join(A.src, "tests", "data", "ncclt-corpus", "all_reduce_perf-2.19.6.txt")
    rc, out, err = run(["compare", log, log])
    check("truth: an 8-rank log's busbw 0 is not blamed on one rank",
          rc == 0 and "busbw is 0 in 2 rows" in out and "one rank" not in out, (rc, out, err))


def truth_sizes_history():
    out = os.path.join(TMP, "many-sizes")
    rc, so, err = run(["sweep", "--backend", "sim", "-b", "8", "-e", "1G", "-i", "8", "--out", out])
    check("truth: -b 8 -e 1G -i 8 says more than 100000 sizes", rc == 2 and one_line(
        err, "more than 100000 sizes") and not os.path.exists(out), (rc, err))
    good_run()
    top = os.path.join(TMP, "hist")
    for d in ("a", "b"):
        os.makedirs(os.path.join(top, d))
        shutil.copy(os.path.join(TMP, "good", "run.json"), os.path.join(top, d, "run.json"))
    for d in (TMP, top, os.path.join(top, "a"), os.path.join(TMP, "good")):
        os.chmod(d, 0o755)
    os.chmod(os.path.join(top, "a", "run.json"), 0o644)
    os.chmod(os.path.join(top, "b"), 0o700 if os.geteuid() == 0 else 0o000)
    # root reads any folder: the case runs as nobody
    wrap = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    rc, out, err = run(["history", top], wrap=wrap)
    check("truth: history names an unreadable folder", rc == 0 and "1 runs" in out and
          os.path.join(top, "b") in err and "cannot read this folder" in err, (rc, out, err))
    os.chmod(os.path.join(top, "b"), 0o755)


def g_truth():
    truth_impossible()
    truth_report()
    truth_sizes_history()


GROUPS = {"ncclt_corpus": g_ncclt_corpus, "limits": g_limits, "truth": g_truth}


def main():
    global A, TMP
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mpirun", default="mpirun --oversubscribe")
    ap.add_argument("--src", default=os.path.dirname(os.path.dirname(HERE)))
    ap.add_argument("--fail-threads", default="",
                    help="the LD_PRELOAD library that fails dlcomm's pthread_create (fail_threads.c)")
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
