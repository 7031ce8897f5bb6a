#!/usr/bin/env python3
"""Hardening tests by class: each group below runs the real dlcomm (and real
mpirun where ranks matter) with hostile but fair input and asserts the
documented promises (docs/exit-codes.md): one line on stderr and a documented exit code, nothing
half-written, nothing finished lost, no secret recorded.

  hardening_test.py --bin DLCOMM [--mpirun "mpirun ..."] GROUP

GROUP: defects (one case per issue-17 defect), wide (one case per finding
of scripts/adversarial_wide.py), options (bad values for
every option of every command, from `dlcomm __options`), files (special
files to every reader), encodings, concurrency, signals, secrets.
"""
import argparse
import errno
import fcntl
import json
import os
import random
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

A = None
FAILS = []
TMP = None


def run(args, env=None, timeout=60, mpi=0, cwd=None, stdin=subprocess.DEVNULL):
    cmd = [A.bin] + list(args)
    if mpi:
        cmd = shlex.split(A.mpirun) + ["-np", str(mpi)] + cmd
    e = dict(os.environ)
    e.setdefault("NCCL_NVLS_ENABLE", "0")
    e.update(env or {})
    try:
        p = subprocess.run(cmd, env=e, timeout=timeout, cwd=cwd, stdin=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def check(name, ok, detail=""):
    if ok:
        print("ok   %s" % name)
    else:
        print("FAIL %s %s" % (name, detail))
        FAILS.append(name)


def one_line(err):
    lines = [l for l in err.splitlines() if l.startswith("dlcomm:")]
    return len(lines) >= 1


def expect_usage(name, args, want=None, **kw):
    """exit 2, a dlcomm line naming `want` on stderr."""
    rc, out, err = run(args, **kw)
    ok = rc == 2 and one_line(err) and (want is None or want in err)
    check(name, ok, "rc=%s stderr=%r" % (rc, err[-300:]))
    return rc, out, err


def tmp(*parts):
    return os.path.join(TMP, *parts)


def fresh(name):
    d = tmp(name)
    subprocess.run(["rm", "-rf", d])
    return d


def tiny_sweep(out, *extra, env=None, mpi=0, backend="mpi"):
    args = ["sweep", "--backend", backend, "-c", "allreduce", "-b", "8", "-e", "8", "-n", "2",
            "-w", "0", "-q", "--out", out] + list(extra)
    return run(args, env=env, mpi=mpi)


def load_json_strict(path):
    with open(path, "rb") as f:
        raw = f.read()
    return json.loads(raw.decode("utf-8"))  # strict: bad UTF-8 raises


def write(path, data, mode="w"):
    with open(path, mode) as f:
        f.write(data)
    return path


def good_run():
    """A finished, real run.json to mutate."""
    d = tmp("good")
    if not os.path.exists(os.path.join(d, "run.json")):
        rc, _, err = tiny_sweep(d)
        assert rc == 0, err
    return os.path.join(d, "run.json")


def profile(name, body):
    return write(tmp(name + ".json"), body if isinstance(body, str) else json.dumps(body))


# ---------------------------------------------------------------- defects --

def g_defects():
    # 1: counts of 2^31 elements or more cannot be expressed to MPI-3 calls.
    rc, out, err = run(["sweep", "--backend", "mpi", "-c", "allreduce", "-d", "int8",
                        "--placement", "out", "-b", "4G", "-e", "4G", "-n", "1", "-w", "0",
                        "-q", "--out", fresh("d1")], timeout=30)
    check("d1_count_limit", rc == 2 and "2147483647" in err and not os.path.exists(tmp("d1", "run.json")),
          "rc=%s %r" % (rc, err[-300:]))
    # 4: integers beyond an int are refused, not truncated.
    for opt, val in (("-n", "2147483648"), ("-n", "4294967297"), ("--max-iters", "4294967296"),
                     ("-w", "99999999999999999999")):
        expect_usage("d4_range%s=%s" % (opt, val), ["sweep", opt, val, "--out", fresh("d4")])
    # 5: credential-like names in any case, NCCL's real settings kept.
    d = fresh("d5")
    secrets = {"HOROVOD_api_key": "s1", "NCCL_my_secret": "s2", "HOROVOD_Token": "s3",
               "OMPI_MCA_x_password": "s4", "NCCL_PassWord": "s5", "UCX_Credentials": "s6",
               "HOROVOD_ApiKey": "s7"}
    keep = {"NCCL_IB_PKEY": "1", "NCCL_ALGO": "Ring", "NCCL_IB_HCA": "mlx5"}
    rc, _, err = tiny_sweep(d, env=dict(secrets, **keep))
    env = load_json_strict(os.path.join(d, "run.json")).get("environment", {}) if rc == 0 else {}
    leaked = [k for k in secrets if k in env]
    check("d5_secret_any_case", rc == 0 and not leaked, "rc=%s leaked=%s" % (rc, leaked))
    check("d5_nccl_kept", all(k in env for k in keep), "env=%s" % sorted(env))
    # 6: a finished run is not overwritten unless asked; a live one is refused.
    d = fresh("d6")
    rc1, _, _ = tiny_sweep(d)
    rc2, _, err2 = tiny_sweep(d)
    check("d6_finished_refused", rc1 == 0 and rc2 == 2 and "--overwrite" in err2,
          "rc=%s,%s %r" % (rc1, rc2, err2[-200:]))
    rc3, _, _ = tiny_sweep(d, "--overwrite")
    check("d6_overwrite", rc3 == 0)
    d = fresh("d6b")
    os.makedirs(d)
    fd = os.open(os.path.join(d, ".dlcomm.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    rc, _, err = tiny_sweep(d, "--overwrite")
    os.close(fd)
    check("d6_live_refused", rc == 2 and "another" in err and not os.path.exists(os.path.join(d, "run.json")),
          "rc=%s %r" % (rc, err[-200:]))
    # 7: long input is used whole or refused.
    long_out = tmp("d7", *(["x" * 200] * 6))
    subprocess.run(["rm", "-rf", tmp("d7")])
    rc, _, err = tiny_sweep(long_out)
    check("d7_long_out", (rc == 0 and os.path.exists(os.path.join(long_out, "run.json"))) or
          (rc == 2 and one_line(err)), "rc=%s %r" % (rc, err[-200:]))
    # a list longer than 4095 bytes whose last word is wrong: read whole, that word is named
    plist = ",".join("./" * 300 + p + ".json" for p in ("ring", "tree", "ll", "ll128", "simple", "socket", "shm-off")) + ",nosuch-profile"
    rc, _, err = run(["sweep", "--backend", "sim", "-p", plist, "--out", fresh("d7b")],
                     cwd=os.path.join(A.src, "topologies", "profiles"))
    check("d7_long_p", rc == 2 and ("nosuch-profile" in err or "at most" in err), "rc=%s %r" % (rc, err[-200:]))
    # 8: readers: only whole regular files.
    fifo = tmp("fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    expect_usage("d8_fifo_report", ["report", fifo], timeout=10)
    expect_usage("d8_devzero_report", ["report", "/dev/zero"], timeout=10)
    g = open(good_run()).read()
    expect_usage("d8_trailing_garbage", ["report", write(tmp("trail.json"), g + "garbage")])
    expect_usage("d8_two_docs", ["report", write(tmp("two.json"), g + g)])
    # 9: outputs: UTF-8 run.json; RFC 4180 run.csv.
    d = fresh("d9") + "-\udcff".encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")
    rc, _, err = tiny_sweep(d)
    ok = False
    if rc == 0:
        try:
            load_json_strict(os.path.join(d, "run.json"))
            ok = True
        except (UnicodeDecodeError, ValueError) as e:
            err = str(e)
    check("d9_utf8_out", ok, "rc=%s %r" % (rc, err[-200:]))
    # 9: plot: undrawable figures refused in one line, never a claim of charts not drawn
    if subprocess.run(["sh", "-c", "command -v gnuplot"], stdout=subprocess.DEVNULL).returncode == 0:
        for tag, mut in (("huge", {"mean": 1e308, "bw": 1e308}), ("dropped", {"mean": -1, "bw": None})):
            doc = json.load(open(good_run()))
            for r in doc["profiles"][0]["results"]:
                r["time_us"]["mean"] = mut["mean"]
                r["busbw_gbps"] = r["algbw_gbps"] = mut["bw"]
            f = write(tmp("plot-%s.json" % tag), json.dumps(doc))
            out = fresh("plot-" + tag)
            rc, so, err = expect_usage("d9_plot_%s" % tag, ["plot", f, "--out", out])
            pngs = [x for x in os.listdir(out) if x.endswith(".png")] if os.path.isdir(out) else []
            check("d9_plot_%s_no_claim" % tag, "wrote" not in so and not pngs, "%r %s" % (so, pngs))
    # 10: profiles
    for nm, body, want in (
            ("p_space", {"name": "ps", "env": {"NCCL ALGO": "Ring"}}, "variable name"),
            ("p_newline", {"name": "pn", "env": {"NCCL_\nALGO": "Ring"}}, "variable name"),
            ("p_digit", {"name": "pd", "env": {"1NCCL": "Ring"}}, "variable name"),
            ("p_trailing", json.dumps({"name": "pt", "env": {}}) + " {}", "JSON"),
            ("p_minmax", {"name": "pm", "env": {}, "applies_when": {"min_nodes": 4, "max_nodes": 2}}, "min_nodes"),
            ("p_huge", {"name": "ph", "env": {"NCCL_ALGO": "R" * 200000}}, "NCCL_ALGO"),
    ):
        expect_usage("d10_" + nm, ["sweep", "--backend", "sim", "-p", profile(nm, body),
                                   "--out", fresh("d10")], want=want)
    conf = write(tmp("nccl.conf"), "NCCL_ALGO=Ring\n NCCL_NVLS_ENABLE = 1\n")
    expect_usage("d10_conf_nvls", ["sweep", "--backend", "sim", "-p",
                                    profile("p_conf", {"name": "pc", "env": {"NCCL_CONF_FILE": conf}}),
                                    "--out", fresh("d10")], want="NCCL_NVLS_ENABLE")
    # 11: the small ones
    os.makedirs(tmp("jdir"), exist_ok=True)
    rc, out, err = expect_usage("d11_preflight_json_dir", ["preflight", "--json", tmp("jdir")], timeout=60)
    check("d11_preflight_json_dir_before_checks", out == "", "stdout=%r" % out[:200])
    expect_usage("d11_version_extra", ["version", "extra"])
    expect_usage("d11_help_extra", ["help", "extra"])
    rc, out, err = run([])
    check("d11_no_command", rc == 2 and out == "" and "usage" in err, "rc=%s out=%r" % (rc, out[:80]))
    # atomic writes: a planted link at any predictable temp name is not followed
    d = fresh("d11w")
    os.makedirs(d)
    victim = write(tmp("victim"), "keep")
    for pid in range(os.getpid(), os.getpid() + 200):
        for base in ("run.json", "run.csv"):
            os.symlink(victim, os.path.join(d, ".%s.tmp.%d" % (base, pid)))
    rc, _, _ = tiny_sweep(d)
    check("d11_atomic_no_follow", rc == 0 and open(victim).read() == "keep")
    # gnuplot's charts: it opens its output by name, so a link planted at the name it was
    # given (once `.<chart>.tmp`, predictable) must not be where it writes
    if shutil.which("gnuplot"):
        pd = fresh("d11p")
        os.makedirs(pd)
        pv = write(tmp("plot-victim"), "keep")
        for coll in ("allreduce",):
            for metric in ("busbw", "time"):
                os.symlink(pv, os.path.join(pd, ".%s-%s.png.tmp" % (coll, metric)))
        rc, _, err = run(["plot", good_run(), "--out", pd])
        chart = os.path.join(pd, "allreduce-busbw.png")
        kept = open(pv, "rb").read()
        check("d11_plot_no_follow", rc == 0 and kept == b"keep" and os.path.isfile(chart) and
              os.path.getsize(chart) > 0, "rc=%s victim %r %r" % (rc, kept[:20], err[-200:]))


# ---------------------------------------------------------------- options --

def options():
    rc, out, err = run(["__options"])
    assert rc == 0, "dlcomm __options: rc=%s %s" % (rc, err)
    return json.loads(out)


BAD = {
    "int": ["", "x", "1x", "1.5", "2147483648", "-2147483649", "9223372036854775808",
            "99999999999999999999999", "0x10", " 1", "\t2"],
    "double": ["", "x", "nan", "inf", "-inf", "1e999", "1,5", "0x1p3z", " 1"],
    "size": ["", "x", "-1", "1Q", "16E", "18446744073709551616", "1e30", "nan", "K", " 8"],
    "flag": [],
    "str": [],
    # a row with choices: none of them (an empty word, a near miss, a list's stray comma)
    "enum": ["", "x", "bogus-value", "1.0", " 0"],
    "list": ["", ",", "x", "all,x", ",,"],
}


def g_options():
    tables = options()
    rnd = random.Random(17)
    n = 0
    for cmd, opts in sorted(tables.items()):
        for o in opts:
            bad = BAD[o["kind"]]
            if not bad:
                continue
            # every option at least twice; the whole list for a sample
            vals = bad if rnd.random() < 0.3 else rnd.sample(bad, 2)
            for v in vals:
                rc, _, err = run([cmd, "--%s=%s" % (o["name"], v)], timeout=30)
                n += 1
                ok = rc == 2 and one_line(err) and ("--" + o["name"]) in err
                check("opt_%s_--%s=%r" % (cmd, o["name"], v), ok, "rc=%s %r" % (rc, err[-200:]))
            rc, _, err = run([cmd, "--" + o["name"]], timeout=30)
            check("opt_%s_--%s_missing" % (cmd, o["name"]), rc == 2 and one_line(err),
                  "rc=%s %r" % (rc, err[-200:]))
    for cmd in tables:
        rc, _, err = run([cmd, "--no-such-option-%s" % cmd])
        check("opt_%s_unknown" % cmd, rc == 2 and one_line(err))
    check("opt_tables_nonempty", len(tables) >= 6 and n > 50, "%d commands, %d runs" % (len(tables), n))


# ------------------------------------------------------------------ files --

def readers():
    """Each command that reads a user's file, as a function of that file."""
    return {
        "report": lambda f: ["report", f],
        "compare_base": lambda f: ["compare", f, good_run()],
        "compare_new": lambda f: ["compare", good_run(), f],
        "plot": lambda f: ["plot", f, "--out", fresh("plotout")],
        "preflight_baseline": lambda f: ["preflight", "--baseline", f, "--json", tmp("pf.json")],
        "sweep_profile": lambda f: ["sweep", "--backend", "sim", "-p", f, "--out", fresh("spout")],
        "sweep_system": lambda f: ["sweep", "--backend", "sim", "--system", f, "--out", fresh("ssout")],
        "profiles": lambda f: ["profiles", f],
        # a FIFO here blocked forever (scripts/adversarial_wide.py)
        "sweep_matrix": lambda f: ["sweep", "--backend", "mpi", "-c", "alltoallv", "-b", "64", "-e", "64", "-n", "1",
                                   "-w", "0", "-q", "--matrix", f, "--out", fresh("smout")],
    }


def g_files():
    fifo = tmp("fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    loop = tmp("loop")
    if not os.path.lexists(loop):
        os.symlink(loop, loop)
    os.makedirs(tmp("adir"), exist_ok=True)
    g = open(good_run()).read()
    specials = {"fifo": fifo, "devzero": "/dev/zero", "dir": tmp("adir"), "symloop": loop,
                "missing": tmp("no-such-file"), "empty": write(tmp("empty.json"), ""),
                "nul": write(tmp("nul.json"), "\0" * 10), "trailing": write(tmp("trail.json"), g + "x"),
                "twodocs": write(tmp("two.json"), g + g), "notutf8": write(tmp("bad8.json"), b"{\"\xff\":1}", "wb"),
                "deep": write(tmp("deep.json"), "[" * 100000 + "]" * 100000)}
    for rname, mk in readers().items():
        for sname, path in specials.items():
            if rname == "plot" and sname == "dir":
                continue  # a run folder is a valid plot input (it holds run.json)
            rc, _, err = run(mk(path), timeout=15)
            check("file_%s_%s" % (rname, sname), rc == 2 and one_line(err), "rc=%s %r" % (rc, err[-200:]))
    # concatenated nccl-tests logs: refused or read as one
    log = os.path.join(A.src, "tests", "analysis", "data")
    txt = [os.path.join(log, f) for f in sorted(os.listdir(log)) if f.endswith(".txt") or f.endswith(".log")]
    if txt:
        body = open(txt[0]).read()
        cat = write(tmp("cat.log"), body + body)
        rc, out, err = run(["report", cat])
        rc1, out1, _ = run(["report", txt[0]])
        check("file_ncclt_concat", rc == 2 or (rc == rc1 and out == out1), "rc=%s %r" % (rc, err[-200:]))


# -------------------------------------------------------------- encodings --

def g_encodings():
    raw = b"\xff\xfe-\xc3(-\xed\xa0\x80"
    name = raw.decode("utf-8", "surrogateescape")
    d = fresh("enc") + name
    rc, _, err = tiny_sweep(d)
    ok = rc == 0
    try:
        ok = ok and "command" in load_json_strict(os.path.join(d, "run.json"))
    except (UnicodeDecodeError, ValueError):
        ok = False
    check("enc_out_mpi", ok, "rc=%s %r" % (rc, err[-200:]))
    # a profile whose name is not UTF-8 or holds a quote or newline
    for tag, nm in (("bad8", b"p\xff\xfe"), ("quote", b'p"q'), ("newline", b"p\nq")):
        body = b'{"name": "' + nm.replace(b'"', b'\\"').replace(b"\n", b"\\n") + b'", "env": {}}'
        f = write(tmp("enc-%s.json" % tag), body, "wb")
        d = fresh("enc-" + tag)
        rc, _, err = run(["sweep", "--backend", "sim", "-c", "allreduce", "-b", "8", "-e", "8", "-n", "2",
                          "-w", "0", "-q", "-p", f, "--out", d])
        if rc == 2:
            check("enc_profile_%s" % tag, one_line(err))
            continue
        ok = rc == 0
        try:
            load_json_strict(os.path.join(d, "run.json"))
            import csv
            with open(os.path.join(d, "run.csv"), newline="", encoding="utf-8", errors="strict") as fh:
                rows = list(csv.reader(fh))
            ok = ok and len(rows) >= 2 and all(len(r) == len(rows[0]) for r in rows)
        except (UnicodeDecodeError, ValueError, OSError) as e:
            ok, err = False, str(e)
        check("enc_profile_%s" % tag, ok, "rc=%s %r" % (rc, err[-200:]))


# ------------------------------------------------------------ concurrency --

def g_concurrency():
    for backend in ("mpi", "sim"):
        d = fresh("conc-" + backend)
        args = ["sweep", "--backend", backend, "-c", "allreduce", "-b", "8", "-e", "64K", "-n", "20",
                "-w", "0", "-q", "--out", d]
        ps = [subprocess.Popen([A.bin] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
              for _ in range(2)]
        res = [(p.wait(120), p.stderr.read().decode()) for p in ps]
        codes = sorted(r[0] for r in res)
        ok = codes == [0, 2] and any("another" in r[1] or "--overwrite" in r[1] for r in res)
        check("conc_two_sweeps_one_out_%s" % backend, ok, "codes=%s %r" % (codes, [r[1][-150:] for r in res]))
        try:
            j = load_json_strict(os.path.join(d, "run.json"))
            check("conc_result_whole_%s" % backend, j.get("exit_code") == 0)
        except (OSError, ValueError) as e:
            check("conc_result_whole_%s" % backend, False, str(e))


# ---------------------------------------------------------------- signals --

def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def tree(pid):
    out = []
    for c in children(pid):
        out.append(c)
        out += tree(c)
    return out


def comm(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def world_rank(pid):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            for kv in f.read().split(b"\0"):
                if kv.startswith(b"OMPI_COMM_WORLD_RANK="):
                    return int(kv.split(b"=", 1)[1])
    except (OSError, ValueError):
        pass
    return None


def find_victim(top, target, rank):
    """dlcomm launch or mpirun at the top, mpirun under dlcomm launch, the
    MPI process of `rank` (the mpi backend's rank, or a worker backend's
    supervisor), or the worker of `rank`."""
    if target in ("top", "group", "all"):
        return top
    for q in tree(top):
        a = comm(q)
        if target == "mpirun" and a and os.path.basename(a[0]) in (b"mpirun", b"mpiexec", b"orterun"):
            return q
        if target == "rank" and b"sweep" in a and world_rank(q) == rank:
            return q
        if target == "worker" and b"__worker" in a and a[-2:-1] == [str(rank).encode()]:
            return q
    return None


# Per case: (how it is started, backend, ranks, target, rank, signal, the
# exit code of the command the user ran, how the profile it hit ends).
# Started as `mpirun ...`, the code is Open MPI 4.1's own: 1 when mpirun
# was signalled itself (set before the ranks hear of it), a rank's own code
# (3) when that rank ended the job, 128 + the signal when one was killed.
# Started as `dlcomm launch mpirun ...`, it is dlcomm's: 3 in every case.
# Targets: top (the command the user ran), group (its process group, as
# timeout(1) signals), all (every process one by one, as systemd's stop or
# Slurm's job kill do), mpirun (under launch), rank, worker.
SIG_CASES = [
    ("mpirun", "mpi", 2, "top", 0, signal.SIGINT, 1, "interrupted"),
    ("mpirun", "mpi", 2, "top", 0, signal.SIGTERM, 1, "interrupted"),
    ("mpirun", "mpi", 3, "rank", 1, signal.SIGTERM, 3, "interrupted"),
    ("mpirun", "mpi", 4, "rank", 2, signal.SIGKILL, 137, "crashed"),
    ("mpirun", "mpi", 2, "rank", 1, signal.SIGSEGV, 139, "crashed"),
    ("mpirun", "sim", 2, "top", 0, signal.SIGINT, 1, "interrupted"),
    ("mpirun", "sim", 2, "top", 0, signal.SIGTERM, 1, "interrupted"),
    ("mpirun", "sim", 2, "rank", 1, signal.SIGTERM, 3, "interrupted"),
    ("mpirun", "sim", 3, "rank", 1, signal.SIGKILL, 137, "crashed"),
    ("mpirun", "sim", 2, "worker", 1, signal.SIGKILL, 3, "crashed"),
    ("mpirun", "sim", 2, "worker", 0, signal.SIGSEGV, 3, "crashed"),
    ("launch", "mpi", 2, "top", 0, signal.SIGINT, 3, "interrupted"),
    ("launch", "mpi", 2, "top", 0, signal.SIGTERM, 3, "interrupted"),
    ("launch", "mpi", 2, "group", 0, signal.SIGTERM, 3, "interrupted"),
    ("launch", "mpi", 2, "mpirun", 0, signal.SIGTERM, 3, "interrupted"),
    ("launch", "mpi", 2, "all", 0, signal.SIGTERM, 3, "interrupted"),
    ("launch", "mpi", 4, "rank", 2, signal.SIGKILL, 3, "crashed"),
    ("launch", "mpi", 2, "rank", 0, signal.SIGKILL, 3, None),
    ("launch", "sim", 2, "top", 0, signal.SIGTERM, 3, "interrupted"),
    ("launch", "sim", 2, "worker", 1, signal.SIGKILL, 3, "crashed"),
]
# On a GPU host (--sig-backends nccl): one rank (NCCL refuses two ranks on
# one GPU), its profiles in workers as on sim.
SIG_CASES_NCCL = [
    ("mpirun", "nccl", 1, "top", 0, signal.SIGTERM, 1, "interrupted"),
    ("mpirun", "nccl", 1, "worker", 0, signal.SIGSEGV, 3, "crashed"),
    ("launch", "nccl", 1, "top", 0, signal.SIGINT, 3, "interrupted"),
    ("launch", "nccl", 1, "top", 0, signal.SIGTERM, 3, "interrupted"),
    ("launch", "nccl", 1, "all", 0, signal.SIGTERM, 3, "interrupted"),
    ("launch", "nccl", 1, "worker", 0, signal.SIGKILL, 3, "crashed"),
    ("launch", "nccl", 1, "rank", 0, signal.SIGTERM, 3, "interrupted"),
    ("launch", "nccl", 1, "rank", 0, signal.SIGKILL, 3, None),
]


def sig_sweep(backend, out):
    """A sweep whose cases each take real time, so the signal lands in the
    middle: mpi measures each case for its whole --budget (--ci-target 0);
    the sim's default profile is slowed by DLCOMM_INJECT (x40, on every
    rank), its ring profile is not."""
    common = ["-c", "allreduce,allgather", "--placement", "out", "-w", "0", "--out", out]
    if backend == "mpi":
        return ["--backend", "mpi", "-b", "8", "-e", "128", "--budget", "0.25", "--ci-target",
                "0", "--max-iters", "2000000000"] + common, {}
    if backend == "nccl":
        return ["--backend", "nccl", "-b", "8", "-e", "128", "--budget", "0.25", "--ci-target",
                "0", "--max-iters", "2000000000", "-p", "default,ring"] + common, {}
    return ["--backend", "sim", "-b", "256M", "-e", "512M", "-n", "2", "-p", "default,ring"] + \
        common, {"DLCOMM_INJECT": "slow:*:default:40"}


def g_signals():
    """A signal to each process of the tree, sent once the first row is on
    stdout: mpirun ends with the code docs/exit-codes.md gives, run.json is whole
    with exit_code 3 and a final status for every profile (none left
    'running'), every row printed before the signal is kept (run.json and
    run.csv agree), and a killed rank or worker is named with its host and
    signal on stderr and in run.json."""
    import threading
    host = os.uname().nodename
    cases = [c for c in SIG_CASES + SIG_CASES_NCCL if c[1] in A.sig_backends.split(",")]
    for via, backend, np_, target, rank, sig, want_rc, want_status in cases:
        label = "mpirun" if target == "top" and via == "mpirun" else target
        name = "sig_%s%s_%s%s_%s" % ("launch_" if via == "launch" else "", backend, label,
                                     rank if target in ("rank", "worker") else "", sig.name)
        d = fresh(name)
        args, env = sig_sweep(backend, d)
        cmd = ([A.bin, "launch"] if via == "launch" else []) + shlex.split(A.mpirun) + \
            ["-np", str(np_)]
        for k in env:
            cmd += ["-x", k]
        cmd += [A.bin, "sweep"] + args
        e = dict(os.environ, NCCL_NVLS_ENABLE="0", **env)
        t0 = time.time()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        rows, first_row, errb = [], threading.Event(), []

        def read_out():
            for line in iter(p.stdout.readline, b""):
                if line.strip() and not line.startswith(b"#"):
                    rows.append(line)
                    first_row.set()
        threading.Thread(target=read_out, daemon=True).start()
        threading.Thread(target=lambda: errb.append(p.stderr.read()), daemon=True).start()
        victim = None
        if first_row.wait(30):
            victim = find_victim(p.pid, target, rank)
        seen = len(rows)
        status_file = None
        for q in tree(p.pid):
            try:
                with open("/proc/%d/environ" % q, "rb") as f:
                    for kv in f.read().split(b"\0"):
                        if kv.startswith(b"DLCOMM_LAUNCH_STATUS="):
                            status_file = kv.split(b"=", 1)[1].decode()
            except OSError:
                pass
        if via == "launch" and not status_file:
            problems_early = "launch gave its processes no DLCOMM_LAUNCH_STATUS"
            check(name, False, problems_early)
        if victim is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            check(name, False, "no %s %d found (or no row within 30 s)" % (target, rank))
            continue
        if target == "group":
            os.killpg(victim, sig)
        elif target == "all":
            for q in [victim] + tree(victim):
                os.kill(q, sig)
        else:
            os.kill(victim, sig)
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        time.sleep(0.1)
        err = errb[0].decode(errors="replace") if errb else ""
        took = time.time() - t0
        problems = []
        if p.returncode != want_rc:
            problems.append("%s exit %s, want %s" % (via, p.returncode, want_rc))
        if status_file and os.path.exists(os.path.dirname(status_file)):
            problems.append("launch left %s" % os.path.dirname(status_file))
        rj = {}
        try:
            rj = load_json_strict(os.path.join(d, "run.json"))
        except (OSError, ValueError) as ex:
            # rank 0 killed in the first collective: nothing finished, nothing written
            if want_status is not None or os.path.exists(os.path.join(d, "run.json")):
                problems.append("run.json: %s" % ex)
        profs = rj.get("profiles", [])
        statuses = [pr.get("status") for pr in profs]
        if want_status is None:
            # rank 0 killed: run.json as last written (whole, if any), and dlcomm's code
            said = [l for l in err.splitlines() if l.startswith("dlcomm:") and "launch:" in l
                    and "rank 0 left no code" in l]
            if not said:
                problems.append("no launch line saying rank 0 left no code")
            check(name, not problems, "(%.1f s) %s; stderr %r" % (
                time.time() - t0, "; ".join(problems), err[-400:]))
            continue
        if rj and rj.get("exit_code") != 3:
            problems.append("exit_code %s" % rj.get("exit_code"))
        if "running" in statuses or not profs:
            problems.append("statuses %s" % statuses)
        hit = profs[0] if profs else {}
        if hit.get("status") != want_status:
            problems.append("first profile %s, want %s" % (hit.get("status"), want_status))
        kept = sum(len(pr.get("results", [])) for pr in profs)
        if kept < seen:
            problems.append("%d rows kept of %d printed before the signal" % (kept, seen))
        try:
            with open(os.path.join(d, "run.csv")) as f:
                csv_rows = len(f.read().splitlines()) - 1
            if csv_rows != kept:
                problems.append("run.csv has %d rows, run.json %d" % (csv_rows, kept))
        except OSError as ex:
            problems.append("run.csv: %s" % ex)
        left = [f for f in os.listdir(d) if f.startswith(".run.") or f == ".dlcomm.ranks"]
        if left:
            problems.append("left in the folder: %s" % left)
        if backend != "mpi" and target != "worker" and "skipped" not in statuses:
            problems.append("the profile never run is not recorded: %s" % statuses)
        if backend != "mpi" and target == "worker" and statuses[1:] != ["ok"]:
            problems.append("the sweep did not go on after the worker: %s" % statuses)
        if want_status == "crashed":
            # the rank (or worker), its host and the signal, on stderr and in run.json
            said = [l for l in err.splitlines() if l.startswith("dlcomm:") and sig.name in l
                    and "rank %d" % rank in l and host in l]
            if not said:
                problems.append("no dlcomm line naming rank %d, %s and %s" % (rank, host, sig.name))
            fl = [f for f in hit.get("failures", []) if f.get("rank") == rank]
            if target == "worker":
                ok = any(sig.name in f.get("reason", "") and host in f.get("reason", "") for f in fl)
            else:
                ok = any(f.get("signal") == sig.name and f.get("host") == host for f in fl)
            if not ok or rank not in hit.get("failed_ranks", []):
                problems.append("run.json does not name rank %d killed by %s: %s" % (
                    rank, sig.name, hit.get("failures")))
        else:
            said = [l for l in err.splitlines() if l.startswith("dlcomm:") and "interrupted by SIG" in l]
            # signalled twice, mpirun leaves at once, and the ranks' stderr (which it carries)
            # with it: their record and rank 0's code are what count
            if not said and target != "all":
                problems.append("no dlcomm line saying it was interrupted")
            # mpirun signalled passes SIGTERM on; dlcomm launch asks the ranks to stop
            # (SIGUSR2) and they record the signal launch got
            want_by = sig.name if via == "launch" and target in ("top", "group") else "SIGTERM"
            if target in ("top", "group", "all", "mpirun") and rj.get("interrupted_by") != want_by:
                problems.append("interrupted_by %s, want %s" % (rj.get("interrupted_by"), want_by))
        check(name, not problems, "(%.1f s) %s; stderr %r" % (took, "; ".join(problems), err[-400:]))
        if not problems:
            print("     %.1f s, %d rows printed before the signal, %d kept, %s" % (
                took, seen, kept, statuses))
    sig_terminal(A.sig_backends.split(",")[0])
    if "mpi" in A.sig_backends.split(","):
        sig_preflight()
        sig_watch()


def term_once_checking(cmd):
    """Starts cmd (its own session), sends it SIGTERM once a preflight check's
    line is on stdout, and waits: (exit code, stdout, stderr, whether a
    check's line came first)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, start_new_session=True,
                         env=dict(os.environ, NCCL_NVLS_ENABLE="0"))
    first = b""
    while p.poll() is None:
        first = p.stdout.readline()
        if not first or first.startswith((b"PASS", b"SKIP", b"FAIL", b"WARN")):
            break
    os.kill(p.pid, signal.SIGTERM)
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
    return p.returncode, out, err, bool(first)


def sig_preflight():
    """preflight signalled mid-way, through mpirun and through dlcomm launch:
    its JSON says it broke, interrupted by the signal sent, in which step,
    with exit_code 3 (mpirun's own code aside: 1). Fixed counts (-n 200: about
    10 s here) keep it running well past the signal: with --budget 2 it ended
    in about 2 s, and under a loaded ctest the first check's line, forwarded
    by mpirun, once came so late that the run finished before the signal."""
    for via, want_rc in (("mpirun", 1), ("launch", 3)):
        name = "sig_%spreflight_SIGTERM" % ("launch_" if via == "launch" else "")
        j = tmp(name + ".json")
        cmd = ([A.bin, "launch"] if via == "launch" else []) + shlex.split(A.mpirun) + \
            ["-np", "2", A.bin, "preflight", "--no-gpu", "-n", "200", "--json", j]
        t0 = time.time()
        rc, out, err, first = term_once_checking(cmd)
        problems = []
        if not first:
            problems.append("no check's line before the signal")
        if rc != want_rc:
            problems.append("exit %s, want %s" % (rc, want_rc))
        try:
            d = load_json_strict(j)
            v = d.get("verdict", {})
            if d.get("exit_code") != 3 or v.get("status") != "broke" or \
                    v.get("interrupted_by") != "SIGTERM" or not v.get("step"):
                problems.append("json %s %s" % (d.get("exit_code"), v))
        except (OSError, ValueError) as ex:
            problems.append("json: %s" % ex)
        if b"VERDICT BROKE" not in out:
            problems.append("no VERDICT BROKE line")
        check(name, not problems, "(%.1f s) %s; stderr %r" % (
            time.time() - t0, "; ".join(problems), err.decode(errors="replace")[-300:]))


def sig_watch():
    """dlcomm watch stopped (systemctl stop, say) during its preflight: the
    preflight records that it broke, the sweep is not started, watch.json
    says which signal, exit 3."""
    name = "sig_watch_SIGTERM"
    res = fresh("watch-series")
    cmd = [A.bin, "watch", "--results", res, "--preflight", "--no-gpu --budget 2", "--"] + \
        shlex.split(A.mpirun) + ["-np", "2"]
    t0 = time.time()
    rc, out, err, first = term_once_checking(cmd)
    problems = []
    if not first:
        problems.append("no check's line before the signal")
    if rc != 3:
        problems.append("exit %s, want 3" % rc)
    runs = sorted(os.listdir(res)) if os.path.isdir(res) else []
    try:
        wj = load_json_strict(os.path.join(res, runs[-1], "watch.json"))
        pf = wj["steps"]["preflight"]
        if wj.get("interrupted_by") != "SIGTERM" or pf.get("exit_code") != 3 or \
                pf.get("verdict", {}).get("status") != "broke":
            problems.append("watch.json %s" % wj)
        if os.path.exists(os.path.join(res, runs[-1], "sweep")):
            problems.append("the sweep was started after the signal")
    except (OSError, ValueError, KeyError, IndexError) as ex:
        problems.append("watch.json: %s" % ex)
    check(name, not problems, "(%.1f s) %s; stderr %r" % (
        time.time() - t0, "; ".join(problems), err.decode(errors="replace")[-300:]))


def sig_terminal(backend):
    """Ctrl-C at a terminal, `dlcomm launch` in its foreground: the terminal
    signals the whole foreground group, mpirun included, so launch must not
    pass the signal on a second time (Open MPI's mpirun, signalled twice
    within 5 s, exits at once without its ranks' record). Exit 3, the run
    recorded as interrupted with its rows."""
    import pty
    import re
    import select
    name = "sig_launch_%s_terminal_ctrl_c" % backend
    d = fresh(name)
    args, env = sig_sweep(backend, d)
    np_ = "1" if backend == "nccl" else "2"
    cmd = [A.bin, "launch"] + shlex.split(A.mpirun) + ["-np", np_]
    for k in env:
        cmd += ["-x", k]
    cmd += [A.bin, "sweep"] + args
    t0 = time.time()
    try:
        pid, fd = pty.fork()
    except OSError as ex:  # no pseudo-terminals on this host: nothing to type into
        print("skip %s (no pty: %s)" % (name, ex))
        return
    if pid == 0:
        os.environ["NCCL_NVLS_ENABLE"] = "0"
        os.environ.update(env)
        os.execvp(cmd[0], cmd)
    out, sent = b"", False
    row = re.compile(rb"^\s*\d+\s+\d+\s", re.M)
    while time.time() - t0 < 60:
        r, _, _ = select.select([fd], [], [], 0.5)
        if not r:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the terminal's other side is closed
            break
        if not chunk:
            break
        out += chunk
        if not sent and row.search(out):
            os.write(fd, b"\x03")
            sent = True
    _, st = os.waitpid(pid, 0)
    os.close(fd)
    rc = os.waitstatus_to_exitcode(st)
    problems = []
    if not sent:
        problems.append("no row within 60 s")
    if rc != 3:
        problems.append("exit %s, want 3" % rc)
    try:
        rj = load_json_strict(os.path.join(d, "run.json"))
        statuses = [pr.get("status") for pr in rj.get("profiles", [])]
        if rj.get("exit_code") != 3 or statuses[0] != "interrupted" or "running" in statuses:
            problems.append("exit_code %s, statuses %s" % (rj.get("exit_code"), statuses))
        if not rj["profiles"][0].get("results"):
            problems.append("no row kept")
    except (OSError, ValueError, KeyError, IndexError) as ex:
        problems.append("run.json: %s" % ex)
    check(name, not problems, "(%.1f s) %s; terminal %r" % (
        time.time() - t0, "; ".join(problems), out.decode(errors="replace")[-400:]))


# ---------------------------------------------------------------- secrets --

def g_secrets():
    words = ["key", "token", "secret", "password", "passwd", "credential", "auth", "apikey"]
    fams = ["NCCL_", "UCX_", "OMPI_MCA_", "PMIX_MCA_", "HOROVOD_"]
    env = {}
    rnd = random.Random(4)
    for f in fams:
        for w in words:
            for case in (str.lower, str.upper, str.title):
                env["%s%s_%s" % (f, rnd.choice(["my", "X", "a_b"]), case(w))] = "LEAKED-%d" % len(env)
    d = fresh("sec-mpi")
    rc, _, err = tiny_sweep(d, env=env)
    blob = open(os.path.join(d, "run.json")).read() if rc == 0 else ""
    check("secret_sweep_mpi", rc == 0 and "LEAKED" not in blob, "rc=%s %r" % (rc, err[-200:]))
    d = fresh("sec-sim")
    rc, _, err = tiny_sweep(d, env=env, backend="sim")
    blob = open(os.path.join(d, "run.json")).read() if rc == 0 else ""
    check("secret_sweep_sim", rc == 0 and "LEAKED" not in blob, "rc=%s %r" % (rc, err[-200:]))
    j = tmp("sec-pf.json")
    rc, _, err = run(["preflight", "--no-gpu", "--json", j, "--budget", "0.01"], env=env, timeout=90)
    blob = open(j).read() if os.path.exists(j) else ""
    check("secret_preflight", blob != "" and "LEAKED" not in blob, "rc=%s %r" % (rc, err[-200:]))


# ------------------------------------------------------------------- wide --

def mount_tmpfs(path, opts):
    """A tmpfs of its own (root only); False where it cannot be had."""
    os.makedirs(path, exist_ok=True)
    if os.geteuid() != 0:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", path],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def temps_in(d):
    return [f for f in os.listdir(d) if f.startswith(".run.")] if os.path.isdir(d) else []


def g_wide():
    """What scripts/adversarial_wide.py found, one case each: a full
    filesystem, a special file named as an output, stdout closed, full or
    read by a reader that leaves, a secret in a profile's env, tune's lists
    (a bad one was a double free), compare's two-line refusal."""
    big = ["sweep", "--backend", "mpi", "-c", "allreduce,allgather,broadcast", "-b", "8", "-e", "64K",
           "-n", "1", "-w", "0", "-q"]
    # a full filesystem: never a signal; after the run exit 3 naming the file, the last
    # whole run.json kept, no temporary file
    full = tmp("full")
    if mount_tmpfs(full, "size=4k"):
        try:
            rc, _, err = run(big + ["--out", os.path.join(full, "o")], timeout=60)
            check("out_full_4k_no_signal", rc in (2, 3) and one_line(err) and full in err,
                  "rc=%s %r" % (rc, err[-300:]))
        finally:
            subprocess.run(["umount", "-l", full])
        for size in ("24k", "96k"):
            if not mount_tmpfs(full, "size=" + size):
                break
            try:
                o = os.path.join(full, "o")
                rc, _, err = run(big + ["--out", o], timeout=60)
                whole = True  # whatever run.json there is, is a whole earlier version
                try:
                    if os.path.exists(os.path.join(o, "run.json")):
                        load_json_strict(os.path.join(o, "run.json"))
                except (OSError, ValueError):
                    whole = False
                lines = [l for l in err.splitlines() if l.startswith("dlcomm:")]
                check("out_full_%s_exit3" % size, rc == 3 and whole and not temps_in(o) and
                      all(o in l for l in lines) and 1 <= len(lines) <= 2,
                      "rc=%s whole=%s temps=%s %r" % (rc, whole, temps_in(o), err[-300:]))
                if size == "24k":  # filled to the last byte: compare's JSON cannot go there
                    try:
                        with open(os.path.join(full, "filler"), "wb") as fh:
                            while True:
                                fh.write(b"x" * 512)
                                fh.flush()
                    except OSError:
                        pass
                    rc, _, err = run(["compare", good_run(), good_run(), "--json", os.path.join(full, "c.json")])
                    check("out_full_compare_json_exit3", rc == 3 and one_line(err) and
                          not [x for x in os.listdir(full) if x.startswith(".c.json")],
                          "rc=%s %r" % (rc, err[-200:]))
            finally:
                subprocess.run(["umount", "-l", full])
    else:
        print("skip out_full_*: a tmpfs needs root")
    # a FIFO (or any file that is not a regular one) named as an output is refused before
    # the work and left as it was: the rename used to put a file in its place
    fifo = tmp("out-fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    g = good_run()
    for name, args in (("topo_json", ["topo", "--json"]), ("compare_json", ["compare", g, g, "--json"]),
                       ("compare_html", ["compare", g, g, "--html"]), ("report_html", ["report", g, "--html"]),
                       ("report_prom", ["report", g, "--prometheus"]), ("tune_json", ["tune", "--plan-only", "--json"]),
                       ("history_html", ["history", os.path.dirname(g), "--html"]),
                       ("sweep_prom", ["sweep", "--backend", "mpi", "--out", fresh("sp"), "--prometheus"]),
                       ("sweep_html", ["sweep", "--backend", "mpi", "--out", fresh("sh"), "--html"])):
        rc, _, err = run(args + [fifo], timeout=30)
        check("out_special_%s" % name, rc == 2 and one_line(err) and stat.S_ISFIFO(os.lstat(fifo).st_mode),
              "rc=%s fifo=%s %r" % (rc, os.path.exists(fifo), err[-200:]))
        if not stat.S_ISFIFO(os.lstat(fifo).st_mode):
            os.unlink(fifo)
            os.mkfifo(fifo)
    for opt in ("--prometheus", "--html"):
        d = fresh("file-is-out")
        rc, _, err = tiny_sweep(d, opt, d)
        check("out_%s_is_the_out_folder" % opt[2:], rc == 2 and one_line(err) and
              not os.path.exists(os.path.join(d, "run.json")), "rc=%s %r" % (rc, err[-200:]))
    # stdout: a reader that leaves after one line (| head -1) is no reason to lose the run
    d = fresh("stdout-pipe")
    p = subprocess.Popen([A.bin, "sweep", "--backend", "mpi", "-c", "allreduce", "-b", "8", "-e", "1M", "-n", "1",
                          "-w", "0", "--out", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode(errors="replace")
    rc = p.wait(60)
    rows = 0
    try:
        rows = len(load_json_strict(os.path.join(d, "run.json"))["profiles"][0]["results"])
    except (OSError, ValueError, KeyError, IndexError):
        pass
    # 18 sizes, in and out of place
    check("stdout_reader_left_sweep_whole", rc == 0 and rows == 36, "rc=%s rows=%d %r" % (rc, rows, err[-200:]))
    # stdout closed: it is /dev/null, not the next file opened (the folder's lock took fd 1)
    d = fresh("stdout-closed")
    p = subprocess.run([A.bin, "sweep", "--backend", "mpi", "-c", "allreduce", "-b", "8", "-e", "1K", "-n", "1",
                        "-w", "0", "--out", d], stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1))
    lock = open(os.path.join(d, ".dlcomm.lock")).read() if os.path.exists(os.path.join(d, ".dlcomm.lock")) else ""
    check("stdout_closed_not_into_files", p.returncode == 0 and "allreduce" not in lock and "#" not in lock,
          "rc=%s lock=%r" % (p.returncode, lock[:100]))
    if stat.S_ISCHR(os.stat("/dev/full").st_mode):
        with open("/dev/full", "w") as f:
            p = subprocess.run([A.bin, "report", good_run()], stdout=f, stderr=subprocess.PIPE)
        err = p.stderr.decode(errors="replace")
        check("stdout_full_report_exit3", p.returncode == 3 and one_line(err) and "stdout" in err,
              "rc=%s %r" % (p.returncode, err[-200:]))
        d = fresh("stdout-full")
        with open("/dev/full", "w") as f:
            p = subprocess.run([A.bin, "sweep", "--backend", "mpi", "-c", "allreduce", "-b", "8", "-e", "1K", "-n",
                                "1", "-w", "0", "--out", d], stdout=f, stderr=subprocess.PIPE)
        err = p.stderr.decode(errors="replace")
        check("stdout_full_sweep_warns_keeps_0", p.returncode == 0 and "stdout" in err and
              load_json_strict(os.path.join(d, "run.json")).get("exit_code") == 0,
              "rc=%s %r" % (p.returncode, err[-200:]))
        for what, args in (("version", ["version"]), ("help", ["help"]), ("opt_help", ["--help"]),
                           ("launch_help", ["launch", "--help"])):
            with open("/dev/full", "w") as f:
                p = subprocess.run([A.bin] + args, stdout=f, stderr=subprocess.PIPE)
            err = p.stderr.decode(errors="replace")
            check("stdout_full_%s_exit3" % what,
                  p.returncode == 3 and one_line(err) and "stdout" in err,
                  "rc=%s %r" % (p.returncode, err[-200:]))
    else:
        print("skip stdout_full_*: /dev/full is not the full device here")
    # watch: a step refusing its options (exit 2) is said on watch's own stderr, and the
    # sweep is not run after a refused preflight (a value its table takes, its setup not)
    res = fresh("watch-refused")
    rc, out, err = run(["watch", "--results", res, "--preflight=--sizes 12Q", "--"] +
                       shlex.split(A.mpirun) + ["-np", "2"], timeout=60)
    runs = sorted(os.listdir(res)) if os.path.isdir(res) else []
    check("watch_step_refused_said_no_sweep", rc == 2 and one_line(err) and "preflight" in err and
          runs and not os.path.exists(os.path.join(res, runs[-1], "sweep")),
          "rc=%s %r %s" % (rc, err[-200:], runs))
    # words preflight's own table refuses are refused before any step or folder
    res = fresh("watch-refused-early")
    rc, out, err = run(["watch", "--results", res, "--preflight=-", "--"] + shlex.split(A.mpirun) +
                       ["-np", "2"], timeout=60)
    check("watch_step_words_refused_first", rc == 2 and one_line(err) and "--preflight: " in err and
          not (os.path.isdir(res) and os.listdir(res)), "rc=%s %r" % (rc, err[-200:]))
    # a profile's env follows the environment's credential rule
    f = profile("p_secret", {"name": "psec", "env": {"NCCL_IB_TOKEN": "LEAKED1", "HOROVOD_Api_Key": "LEAKED2",
                                                      "NCCL_ALGO": "Ring", "NCCL_IB_PKEY": "1"}})
    d = fresh("psec")
    rc, _, err = run(["sweep", "--backend", "sim", "-c", "allreduce", "-b", "8", "-e", "8", "-n", "1", "-w", "0",
                      "-q", "-p", f, "--out", d])
    blob = open(os.path.join(d, "run.json")).read() if rc == 0 else ""
    env = json.loads(blob)["profiles"][0]["env"] if blob else {}
    check("secret_profile_env", rc == 0 and "LEAKED" not in blob and env.get("NCCL_ALGO") == "Ring" and
          env.get("NCCL_IB_PKEY") == "1", "rc=%s env=%s %r" % (rc, env, err[-200:]))
    # tune's lists, each framework's, under either framework: exit 2, one line (a bad
    # list was freed twice: SIGABRT)
    for fw in ("ddp", "horovod"):
        for opt in ("--bucket-caps", "--fusion-thresholds", "--cycle-times"):
            expect_usage("tune_list_%s_%s" % (fw, opt[2:]), ["tune", "--plan-only", "--framework", fw, opt, "1,,x"],
                         want=opt)
    # the sim's system file: counts that do not fit an int (2^63 nodes was SIGFPE in the
    # worker), a path that is not an object (SIGSEGV); --sim-nodes past the ranks an int
    # holds (ran, and recorded a negative time as a result)
    sysj = json.load(open(os.path.join(A.src, "topologies", "systems", "h200-sxm-8.json")))
    for tag, key, val in (("nodes_2e63", "nodes", 2 ** 63), ("gpn_half", "gpus_per_node", 1.5),
                          ("path_array", "paths", dict(sysj["paths"], socket=[1, "a"]))):
        f = write(tmp("sys-%s.json" % tag), json.dumps(dict(sysj, **{key: val})))
        expect_usage("sim_system_%s" % tag, ["sweep", "--backend", "sim", "-c", "allreduce", "-b", "8", "-e", "8",
                                             "-n", "1", "-w", "0", "-q", "--system", f, "--out", fresh("sys")],
                     want=key if key != "paths" else "socket")
    expect_usage("sim_nodes_past_int", ["sweep", "--backend", "sim", "-c", "allreduce", "-b", "8", "-e", "8", "-n",
                                        "1", "-w", "0", "-q", "--sim-nodes", "2147483647", "--out", fresh("simn")],
                 want="--sim-nodes")
    # a fault planted on a profile the run does not have would never fire: exit 2
    d = fresh("inj-noprof")
    rc, _, err = run(["sweep", "--backend", "sim", "-c", "allreduce", "-b", "8", "-e", "8", "-n", "1", "-w", "0",
                      "-q", "-p", "default,ring", "--out", d], env={"DLCOMM_INJECT": "corrupt:0:tree"})
    check("inject_profile_not_in_run", rc == 2 and one_line(err) and "DLCOMM_INJECT" in err and
          not os.path.exists(os.path.join(d, "run.json")), "rc=%s %r" % (rc, err[-200:]))
    # exit 2: one line, however many reasons
    log = os.path.join(A.src, "tests", "analysis", "data", "nccl-tests-2.19.6_all_reduce_h200x1.txt")
    lines = open(log).read().splitlines(True)
    i = next(k for k, l in enumerate(lines) if l.startswith("#  Rank"))
    two = write(tmp("two-ranks.txt"), "".join(lines[:i + 1] + [lines[i]] + lines[i + 1:]))
    rc, _, err = run(["compare", log, two])
    check("compare_nothing_in_common_one_line", rc == 2 and len([l for l in err.splitlines()
                                                                  if l.startswith("dlcomm:")]) == 1,
          "rc=%s %r" % (rc, err[-300:]))


GROUPS = {"defects": g_defects, "options": g_options, "files": g_files, "encodings": g_encodings,
          "concurrency": g_concurrency, "signals": g_signals, "secrets": g_secrets,
          "wide": g_wide}


def main():
    global A, TMP
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mpirun", default="mpirun --oversubscribe")
    ap.add_argument("--sig-backends", default="mpi,sim",
                    help="signals: the backends whose cases run (nccl: on a GPU host)")
    ap.add_argument("--src", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("groups", nargs="+", choices=sorted(GROUPS))
    A = ap.parse_args()
    A.bin = os.path.abspath(A.bin)
    with tempfile.TemporaryDirectory(prefix="dlcomm-hard-") as t:
        TMP = t
        os.chdir(t)
        for g in A.groups:
            GROUPS[g]()
    print("%d failed" % len(FAILS))
    for f in FAILS:
        print("  " + f)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
