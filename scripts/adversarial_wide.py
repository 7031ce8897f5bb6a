#!/usr/bin/env python3
"""The wide adversarial classes (scripts/adversarial.sh runs them; not CI).

  adversarial_wide.py --bin DLCOMM [--mpirun "mpirun ..."] [--scale F] [CLASS...]

CLASS: readers (type mutations of a real run.json and random bytes
through report, compare and plot), argv (random combinations of valid and invalid options for every
command, from `dlcomm __options`), out (--out and every output file on a
regular file, a link, a read-only or a full filesystem), stdio (stdout
closed, /dev/full, a pipe closed early), inputs (mutated profiles, system
files, baselines, nccl-tests logs, models), inject (DLCOMM_INJECT grammar),
secrets (credential-like names in a profile's env). --scale multiplies
every class's count (0.1 for a quick look).

Each run is judged by one oracle (judge()): an exit code of 0..3, never a
signal or a hang; exit 2 says so on a `dlcomm:` line and leaves no run.json,
run.csv or temporary file; a run.json that exists is whole strict UTF-8
JSON whose exit_code is the process's, with run.csv holding its rows; no
temporary file is ever left. Classes add their own oracle on top.
"""
import argparse
import csv
import io
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

A = None
TMP = None
STATS = {}  # class -> {"runs": n, "findings": [..], "codes": {rc: n}}
CUR = None


def note(rc):
    s = STATS[CUR]
    s["runs"] += 1
    s["codes"][str(rc)] = s["codes"].get(str(rc), 0) + 1


def finding(what, cmd, rc, err):
    STATS[CUR]["findings"].append({"what": what, "cmd": " ".join(map(str, cmd))[:400], "rc": rc,
                                   "stderr": err[-300:]})


def run(args, env=None, timeout=40, mpi=0, stdout=subprocess.PIPE, cwd=None, shell_tail=None):
    cmd = [A.bin] + list(args)
    if mpi:
        cmd = shlex.split(A.mpirun) + ["-np", str(mpi)] + sum((["-x", k] for k in (env or {})), []) + cmd
    e = dict(os.environ, NCCL_NVLS_ENABLE="0")
    e.pop("DLCOMM_INJECT", None)
    e.update(env or {})
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=e, timeout=timeout, stdin=subprocess.DEVNULL, stdout=stdout,
                           stderr=subprocess.PIPE, cwd=cwd or TMP)
        out = p.stdout.decode(errors="replace") if p.stdout is not None else ""
        return p.returncode, out, p.stderr.decode(errors="replace"), time.time() - t0, cmd
    except subprocess.TimeoutExpired as ex:
        return "timeout", "", (ex.stderr or b"").decode(errors="replace"), time.time() - t0, cmd


def dlcomm_lines(err):
    return [l for l in err.splitlines() if l.startswith("dlcomm:")]


def temp_files(d):
    """dl_write_atomic's temporaries: .<name>.XXXXXX beside the target."""
    left = []
    for root, _, files in os.walk(d):
        for f in files:
            if f.startswith(".") and f != ".dlcomm.lock" and len(f.rsplit(".", 1)[-1]) == 6:
                left.append(os.path.join(root, f))
    return left


def read_run(d):
    """run.json strictly (UTF-8, one document) and run.csv's data rows."""
    with open(os.path.join(d, "run.json"), "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))
    rows = sum(len(p.get("results", [])) for p in doc.get("profiles", []))
    with open(os.path.join(d, "run.csv"), "rb") as f:
        cr = list(csv.reader(io.StringIO(f.read().decode("utf-8"), newline="")))
    return doc, rows, len(cr) - 1


def judge(cmd, rc, err, outdirs=(), files=(), want_run=False, mpi=0):
    """The common oracle; returns True when the run broke no promise."""
    note(rc)
    n = len(STATS[CUR]["findings"])
    if rc == "timeout":
        finding("hang", cmd, rc, err)
        return False
    if rc not in (0, 1, 2, 3):
        finding("exit %s (a signal or an undocumented code)" % rc, cmd, rc, err)
    if "Sanitizer" in err or "runtime error:" in err:  # an ASan/UBSan build's report
        finding("a sanitizer report", cmd, rc, err[err.find("Sanitizer") - 200:])
    if rc == 2 and not dlcomm_lines(err):
        finding("exit 2 without a dlcomm line", cmd, rc, err)
    if rc == 3 and not dlcomm_lines(err):
        finding("exit %s without a dlcomm line" % rc, cmd, rc, err)
    for d in outdirs:
        left = temp_files(d) if os.path.isdir(d) else []
        if left:
            finding("temporary files left: %s" % left[:3], cmd, rc, err)
        rj = os.path.join(d, "run.json")
        if rc == 2 and (os.path.exists(rj) or os.path.exists(os.path.join(d, "run.csv"))):
            finding("exit 2 but run.json/run.csv written", cmd, rc, err)
            continue
        if not os.path.exists(rj):
            if want_run and rc in (0, 1):
                finding("exit %s without run.json" % rc, cmd, rc, err)
            continue
        try:
            doc, rows, csv_rows = read_run(d)
        except (OSError, ValueError, UnicodeDecodeError) as ex:
            finding("run.json/run.csv not whole: %s" % ex, cmd, rc, err)
            continue
        unwritten = rc == 3 and "cannot write %s/run." % d in err  # the last whole version stays
        if rc in (0, 1, 3) and doc.get("exit_code") != rc and not unwritten:
            finding("run.json exit_code %s, process %s" % (doc.get("exit_code"), rc), cmd, rc, err)
        if rc in (0, 1) and rows != csv_rows:
            finding("run.json %d rows, run.csv %d" % (rows, csv_rows), cmd, rc, err)
    for f in files:
        if rc == 0 and not os.path.exists(f):
            finding("exit 0 but %s not written" % f, cmd, rc, err)
    return len(STATS[CUR]["findings"]) == n


def fresh(name):
    d = os.path.join(TMP, name)
    shutil.rmtree(d, ignore_errors=True)
    return d


def good_run():
    d = os.path.join(TMP, "good")
    if not os.path.exists(os.path.join(d, "run.json")):
        subprocess.run([A.bin, "sweep", "--backend", "mpi", "-c", "allreduce,allgather", "-b", "8",
                        "-e", "4K", "-n", "2", "-w", "0", "-q", "--out", d], check=True)
    return os.path.join(d, "run.json")


def good_sim():
    d = os.path.join(TMP, "goodsim")
    if not os.path.exists(os.path.join(d, "run.json")):
        subprocess.run([A.bin, "sweep", "--backend", "sim", "-c", "allreduce", "-b", "8", "-e", "64K",
                        "-n", "1", "-w", "0", "-q", "-p", "default,ring", "--out", d], check=True)
    return os.path.join(d, "run.json")


def ncclt_log():
    return os.path.join(A.src, "tests", "analysis", "data", "nccl-tests-2.19.6_all_reduce_h200x1.txt")


# ------------------------------------------------------------------ argv --

INVALID = {
    "int": ["", "x", "-1", "1.5", "2147483648", "0x10", "1e3", " 1", "+"],
    "double": ["", "x", "nan", "inf", "-1", "1e999", "0,5", "-0"],
    "size": ["", "x", "-1", "1Q", "16E", "1e30", "K", "0"],
    "str": ["", "nosuch", ",", "a,,b", "\xff\xfe", "x" * 5000, "-", "--", "all,all"],
}
VALID = {"int": ["0", "1", "2"], "double": ["0.01", "0.5", "1", "2"], "size": ["8", "64", "1K", "4K"]}
# Per command and option: values a user would give (small sizes, short budgets).
STR_VALID = {
    "collectives": ["allreduce", "all", "allreduce,broadcast", "sendrecv", "alltoall", "reduce,gather,scatter",
                    "reducescatter", "alltoallv"],
    "datatype": ["float32", "int8", "all", "float16,bfloat16", "float64", "uint8"],
    "op": ["sum", "max", "all", "avg", "prod,min"],
    "placement": ["out", "in", "both"],
    "split": ["MOD:1", "DIV:1", "AND:0", "OR:0", "MOD:2"],
    "aggregate": ["max", "mean", "min", "rank0", "3", "0"],
    "backend": ["mpi", "sim", "mpi", "sim", "auto"],
    "profiles": ["default", "ring", "default,ring", "tree,ll", "socket"],
    "system": ["h200-sxm-8", "cpu-host", "a100-sxm-8", "pcie-4gpu-nop2p"],
    "stepbytes": ["8", "1K", "4K"],
    "model": ["resnet50"],
    "framework": ["ddp", "horovod"],
    "dtype": ["float32", "float16", "bfloat16"],
    "bucket-caps": ["1,5", "25", "0.5,100", "0", "1,,2", "nan", "x"],
    "fusion-thresholds": ["0,1", "8", "64", "-1", "1e400", ","],
    "cycle-times": ["1", "1,5", "0.5", "0", "inf", "5,"],
    "metric": ["busbw", "time"],
    "stat": ["mean", "p50"],
    "format": ["png", "svg"],
    "sizes": ["1K", "1K,4K", "8"],
    "pairs": ["all", "ring", "none", "auto"],
    "scopes": ["node", "rail,pair", "all"],
    "profile": ["ring", "default"],
    "sweep": ["-c allreduce -b 8 -e 64 -n 1 -w 0 -q", "-c allgather -b 8 -e 8 -n 1 -w 0 -q --backend sim"],
    "preflight": ["--quick --no-gpu --budget 0.01 -n 1 --sizes 1K --check-size 1K --scope-size 1K"],
}
# Options that name a file the command writes (put inside the run's folder).
OUT_FILES = {"json", "html", "prometheus", "textfile", "curve", "matrix", "baseline", "out", "results", "tune"}
# Fixed tiny base per command, so a valid combination finishes in a second.
BASE = {
    "sweep": ["-b", "8", "-e", "64", "-n", "1", "-w", "0", "--budget", "0.01", "--max-iters", "20", "-q"],
    "tune": ["-n", "1", "-w", "0", "--budget", "0.01", "--max-iters", "5", "-q", "--backend", "mpi",
             "--bucket-caps", "25", "--fusion-thresholds", "64", "--cycle-times", "5"],
    "preflight": ["--no-gpu", "--quick", "--budget", "0.01", "-n", "1", "--sizes", "1K", "--check-size", "1K",
                  "--scope-size", "1K", "--backend", "mpi"],
    "watch": ["--sweep", STR_VALID["sweep"][0], "--preflight", STR_VALID["preflight"][0]],
}
# Where a sweep-like command runs long whatever the value: keep it tiny.
NO_FUZZ = {("sweep", "maxbytes"), ("sweep", "minbytes"), ("tune", "model"), ("tune", "backward-ms"),
           ("preflight", "sizes"), ("preflight", "check-size"), ("preflight", "scope-size"),
           ("sweep", "timeout"), ("preflight", "timeout"), ("tune", "timeout")}


def file_value(cmd, name, d, rnd):
    """A value for an option that names a file: valid (in the run's folder),
    or hostile."""
    if name in ("json", "html", "prometheus", "textfile"):
        # never a real device: a run that replaced one took /dev/full off this host once
        return rnd.choice([os.path.join(d, "o.%s" % name), os.path.join(d, "o.%s" % name),
                           d, special("fifo"), special("chr"), os.path.join(d, "no", "such", "f"), ""])
    if name in ("baseline", "curve", "tune"):
        return rnd.choice([good_run(), good_sim(), ncclt_log(), os.path.join(d, "missing.json"), "/dev/null", d])
    if name == "matrix":
        m = os.path.join(TMP, "matrix.txt")
        if not os.path.exists(m):
            open(m, "w").write("8 8\n8 8\n")
        return rnd.choice([m, "/dev/null", os.path.join(d, "missing")])
    if name in ("out", "results"):
        return rnd.choice([d, d, os.path.join(d, "sub"), good_run(), ""])
    return d


def special(kind):
    """A FIFO, or a character device (the null device's numbers, root only)
    of this run's own, named as an output: it must be left as it is."""
    p = os.path.join(TMP, "special-" + kind)
    if not os.path.lexists(p):
        if kind == "fifo":
            os.mkfifo(p)
        elif os.geteuid() == 0:
            os.mknod(p, 0o666 | __import__("stat").S_IFCHR, os.makedev(1, 3))
        else:
            os.mkfifo(p)
    return p


def specials_kept():
    import stat
    ok = True
    for kind, test in (("fifo", stat.S_ISFIFO), ("chr", stat.S_ISCHR if os.geteuid() == 0 else stat.S_ISFIFO)):
        p = os.path.join(TMP, "special-" + kind)
        if os.path.lexists(p) and not test(os.lstat(p).st_mode):
            os.unlink(p)
            ok = False
    return ok


def gen_args(cmd, opts, d, rnd, k):
    args = list(BASE.get(cmd, []))
    pick = rnd.sample(opts, min(k, len(opts)))
    bad = 0
    for o in pick:
        name, kind = o["name"], o["kind"]
        if (cmd, name) in NO_FUZZ:
            continue
        flag = "--" + name if (rnd.random() < 0.7 or not o.get("short")) else "-" + o["short"]
        if kind == "flag":
            args.append(rnd.choice(["--" + name, "--no-" + name]))
            continue
        invalid = rnd.random() < 0.25
        if name in OUT_FILES:
            v = file_value(cmd, name, d, rnd)
        elif invalid:
            v = rnd.choice(INVALID[kind])
            bad += 1
        elif kind == "str":
            v = rnd.choice(STR_VALID.get(name, ["x"]))
        else:
            v = rnd.choice(VALID[kind])
            if cmd == "sweep" and name == "stepfactor":
                v = rnd.choice(["2", "4", "1.5"])
        if flag.startswith("--") and rnd.random() < 0.5:
            args.append("%s=%s" % (flag, v))
        else:
            args += [flag, v]
    r = rnd.random()
    if r < 0.04:
        args.append("stray")
    elif r < 0.06:
        args.append("--")
    elif r < 0.08:
        args.append("--no-such-option")
    return args, bad


def out_of(args, dflt):
    """The --out the command parses (the last one given)."""
    out = dflt
    for i, a in enumerate(args):
        if a.startswith("--out="):
            out = a[6:]
        elif a == "--out" and i + 1 < len(args):
            out = args[i + 1]
    return out or dflt


def positional(cmd, rnd):
    if cmd == "report":
        return [rnd.choice([good_run(), good_sim(), ncclt_log()])]
    if cmd == "compare":
        return [good_run(), rnd.choice([good_run(), good_sim(), ncclt_log()])]
    if cmd == "plot":
        return [rnd.choice([good_run(), good_sim()])]
    if cmd == "history":
        return [os.path.dirname(good_run())]
    return []


def c_argv(count):
    tables = json.loads(subprocess.run([A.bin, "__options"], capture_output=True, check=True).stdout)
    rnd = random.Random(1701)
    per = {"sweep": count * 2, "tune": count // 3, "watch": count // 4, "preflight": count // 2}
    for cmd in sorted(tables):
        for i in range(max(per.get(cmd, count // 2), 5)):
            d = fresh("argv-%s" % cmd)
            os.makedirs(d)
            args, bad = gen_args(cmd, tables[cmd], os.path.join(d, "o"), rnd, rnd.randint(1, 6))
            full = [cmd] + positional(cmd, rnd) + args
            mpi = 0
            if cmd in ("sweep", "tune", "preflight"):
                full += [] if any(a.startswith("--out") for a in args) or cmd == "preflight" else \
                    ["--out", os.path.join(d, "o")]
                if cmd == "sweep" and not any(a.startswith("--backend") for a in args):
                    full += ["--backend", rnd.choice(["mpi", "sim"])]
                mpi = 2 if rnd.random() < 0.15 else 0
            if cmd == "watch":
                full += ["--results", os.path.join(d, "w")]
            rc, out, err, took, c = run(full, mpi=mpi, timeout=60)
            outdirs = [out_of(full, os.path.join(d, "o"))] if cmd in ("sweep", "tune") else []
            judge(c, rc, err, outdirs=outdirs, want_run=cmd == "sweep")
            if not specials_kept():
                finding("a special file named as an output was replaced", c, rc, err)
            if rc == 0 and bad and not any(a in ("stray", "--no-such-option") for a in args):
                # an invalid value accepted: only a finding if the option reached the command
                STATS[CUR].setdefault("accepted_invalid", []).append(" ".join(full)[:300])


# ------------------------------------------------------------------- out --

def mount_tmpfs(path, opts):
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", path], capture_output=True)
    return r.returncode == 0


def umount(path):
    subprocess.run(["umount", "-l", path], capture_output=True)


def c_out(count):
    root = os.geteuid() == 0
    sweep = ["sweep", "-c", "allreduce,allgather,broadcast", "-b", "8", "-e", "64K", "-n", "1", "-w", "0", "-q"]
    f = os.path.join(TMP, "afile")
    open(f, "w").write("keep")
    dang = os.path.join(TMP, "dangling")
    if not os.path.lexists(dang):
        os.symlink(os.path.join(TMP, "nowhere", "x"), dang)
    tgt = fresh("linktarget")
    os.makedirs(tgt)
    lnk = os.path.join(TMP, "tolink")
    if not os.path.lexists(lnk):
        os.symlink(tgt, lnk)
    cases = [("regular file", f, 2), ("dangling link", dang, 2), ("parent is a file", os.path.join(f, "sub"), 2),
             ("link to a folder", lnk, 0), ("empty", "", 2), ("/dev/null", "/dev/null", 2),
             ("a path of 500 bytes", os.path.join(TMP, "y" * 250, "y" * 250), 0)]
    mounts = []
    if root:
        ro = os.path.join(TMP, "ro")
        if mount_tmpfs(ro, "ro,size=1m"):
            mounts.append(ro)
            cases.append(("read-only filesystem", os.path.join(ro, "o"), 2))
        for size in ("4k", "12k", "24k", "48k", "96k"):
            full = os.path.join(TMP, "full" + size)
            if mount_tmpfs(full, "size=" + size):
                mounts.append(full)
                cases.append(("full filesystem %s" % size, os.path.join(full, "o"), None))
    else:
        print("out: not root: the read-only and full filesystem cases are skipped")
    try:
        for i in range(max(1, count // 20)):
            for what, out, want in cases:
                for backend, mpi in (("mpi", 0), ("sim", 0), ("mpi", 2)):
                    for m in mounts:
                        if m.startswith(os.path.join(TMP, "full")):
                            subprocess.run(["sh", "-c", "rm -rf %s/* %s/.[!.]*" % (m, m)], capture_output=True)
                    if what.startswith("link"):
                        shutil.rmtree(tgt, ignore_errors=True)
                        os.makedirs(tgt, exist_ok=True)
                    if what.startswith("a path"):
                        shutil.rmtree(os.path.dirname(out), ignore_errors=True)
                    before = open(f).read()
                    rc, _, err, _, c = run(sweep + ["--backend", backend, "--out", out], mpi=mpi)
                    d = out if os.path.isdir(out) else "/nonexistent"
                    ok = judge(c, rc, err, outdirs=[d] if out else [], want_run=True)
                    if want is not None and rc != want:
                        finding("%s: exit %s, want %s" % (what, rc, want), c, rc, err)
                    if want is None and rc not in (0, 3) and not (rc == 2 and not os.path.exists(os.path.join(out, "run.json"))):
                        finding("%s: exit %s after the run" % (what, rc), c, rc, err)
                    if rc in (2, 3) and out and out not in err and os.path.dirname(out) not in err:
                        finding("%s: no line naming the path" % what, c, rc, err)
                    if rc in (2, 3) and len(dlcomm_lines(err)) > 2:
                        finding("%s: %d dlcomm lines" % (what, len(dlcomm_lines(err))), c, rc, err)
                    if open(f).read() != before:
                        finding("the regular file was written through", c, rc, err)
                    if what == "link to a folder" and rc == 0 and not os.path.exists(os.path.join(tgt, "run.json")):
                        finding("link: run.json not in the link's folder", c, rc, err)
        # every other output file of every command into the full filesystems
        outs = [["compare", good_run(), good_run(), "--json"], ["compare", good_run(), good_run(), "--html"],
                ["report", good_run(), "--html"], ["report", good_run(), "--prometheus"],
                ["tune", "--plan-only", "--json"], ["topo", "--json"],
                ["preflight"] + BASE["preflight"] + ["--json"], ["preflight"] + BASE["preflight"] + ["--prometheus"],
                ["sweep", "--backend", "mpi", "-c", "allreduce", "-b", "8", "-e", "64", "-n", "1", "-w", "0", "-q",
                 "--overwrite", "--html"],
                ["plot", good_run(), "--out"], ["history", os.path.dirname(good_run()), "--html"]]
        for m in [x for x in mounts if "full" in x] + [os.path.join(TMP, "ro")] * (len(mounts) > 0):
            for a in outs:
                subprocess.run(["sh", "-c", "rm -rf %s/* %s/.[!.]*" % (m, m)], capture_output=True)
                target = os.path.join(m, "f.out") if a[0] != "plot" else os.path.join(m, "p")
                extra = ["--out", fresh("outs-sweep")] if a[0] == "sweep" else []
                rc, _, err, _, c = run(a + [target] + extra, timeout=60)
                judge(c, rc, err, outdirs=[m])
                if rc == 0 and a[0] != "plot" and not os.path.exists(target):
                    finding("exit 0 but %s not written" % target, c, rc, err)
                if rc == 0 and a[0] != "plot" and os.path.exists(target) and os.path.getsize(target) == 0:
                    finding("exit 0 but %s empty" % target, c, rc, err)
                if rc not in (0, 2, 3) and a[0] not in ("preflight", "compare"):
                    finding("exit %s writing into %s" % (rc, m), c, rc, err)
    finally:
        for m in mounts:
            umount(m)


# ----------------------------------------------------------------- stdio --

def c_stdio(count):
    import stat
    if not stat.S_ISCHR(os.stat("/dev/full").st_mode):
        print("stdio: /dev/full is not the full device here: that case is skipped")
    cmds = [
        (["sweep", "--backend", "mpi", "-c", "allreduce", "-b", "8", "-e", "1M", "-n", "1", "-w", "0"], 0, True),
        (["sweep", "--backend", "sim", "-c", "allreduce", "-b", "8", "-e", "1M", "-n", "1", "-w", "0",
          "-p", "default,ring"], 0, True),
        (["sweep", "--backend", "mpi", "-c", "allreduce", "-b", "8", "-e", "1M", "-n", "1", "-w", "0"], 2, True),
        (["tune", "--backend", "mpi", "-n", "1", "-w", "0", "--budget", "0.01", "--bucket-caps", "25,50"], 0, True),
        (["report", None], 0, False), (["compare", None, None], 0, False), (["profiles"], 0, False),
        (["preflight"] + BASE["preflight"], 0, False), (["tune", "--plan-only"], 0, False),
        (["history", None], 0, False), (["version"], 0, False), (["topo"], 0, False),
    ]
    for i in range(max(1, count // 40)):
        for base, mpi, is_run in cmds:
            for how in ("closed", "full", "pipe"):
                if how == "full" and not stat.S_ISCHR(os.stat("/dev/full").st_mode):
                    continue
                d = fresh("stdio")
                a = [good_run() if x is None and base[0] != "history" else
                     os.path.dirname(good_run()) if x is None else x for x in base]
                if is_run:
                    a += ["--out", d]
                cmd = ([A.bin] if not mpi else shlex.split(A.mpirun) + ["-np", str(mpi), A.bin]) + a
                e = dict(os.environ, NCCL_NVLS_ENABLE="0")
                if how == "closed":
                    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=e,
                                       pass_fds=(), close_fds=True, timeout=60,
                                       preexec_fn=lambda: os.close(1))
                    rc, err = p.returncode, p.stderr.decode(errors="replace")
                elif how == "full":
                    with open("/dev/full", "w") as full:
                        p = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, env=e, timeout=60)
                    rc, err = p.returncode, p.stderr.decode(errors="replace")
                else:
                    # a reader that takes one line and goes away (as `| head -1`)
                    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
                    p.stdout.readline()
                    p.stdout.close()
                    err = p.stderr.read().decode(errors="replace")
                    rc = p.wait(60)
                if mpi and how == "pipe" and rc == 1:
                    # Open MPI's mpirun aborts the job when its reader goes ("SIGPIPE
                    # detected"): the ranks get SIGTERM, as after kill mpirun (docs/exit-codes.md, Signals),
                    # or had finished already (exit_code 0); run.json says which
                    note(rc)
                    try:
                        doc, rows, csv_rows = read_run(d)
                        said = (doc.get("exit_code"), doc.get("interrupted_by"))
                        if said not in ((3, "SIGTERM"), (0, None)) or rows != csv_rows:
                            finding("mpirun's reader gone: run.json %s/%s" % (doc.get("exit_code"),
                                                                             doc.get("interrupted_by")), cmd, rc, err)
                    except (OSError, ValueError) as ex:
                        finding("mpirun's reader gone: %s" % ex, cmd, rc, err)
                    continue
                judge(cmd, rc, err, outdirs=[d] if is_run else [], want_run=is_run and base[0] == "sweep")
                # the rule (docs/exit-codes.md): a closed stdout is /dev/null; a reader that
                # left (EPIPE) is its choice; any other failure is one line on stderr and
                # exit 3, or only a warning where the record is in files written whole
                if is_run or how in ("closed", "pipe"):  # a sweep's or a measured tune's record is run.json
                    if rc != 0:
                        finding("stdout %s: exit %s, want 0" % (how, rc), cmd, rc, err)
                elif rc != 3:
                    finding("stdout %s: exit %s, its output lost" % (how, rc), cmd, rc, err)
                if is_run and not os.path.exists(os.path.join(d, "run.json")):
                    finding("stdout %s: no run.json" % how, cmd, rc, err)
                if rc != 0 and not dlcomm_lines(err):
                    finding("stdout %s: nothing said" % how, cmd, rc, err)


# ---------------------------------------------------------------- inputs --

def mutate_text(text, rnd):
    lines = text.splitlines(True)
    k = rnd.random()
    if k < 0.25 and lines:
        del lines[rnd.randrange(len(lines))]
    elif k < 0.45 and lines:
        i = rnd.randrange(len(lines))
        lines.insert(i, lines[i])
    elif k < 0.8:
        # a number changed: sign, scale, nan, huge
        import re
        nums = [m for m in re.finditer(r"-?\d+(\.\d+)?(e[+-]?\d+)?", text)]
        if nums:
            m = rnd.choice(nums)
            rep = rnd.choice(["-1", "0", "nan", "inf", "1e308", "99999999999999999999", "-0", "1.5",
                              m.group(0) * 3, "", "0x10"])
            return text[:m.start()] + rep + text[m.end():]
    else:
        if text:
            i = rnd.randrange(len(text))
            return text[:i] + rnd.choice(["\0", "\xff", '"', "{", "}", ",", "\n", "  "]) + text[i + 1:]
    return "".join(lines)


def mutate_json(doc, rnd):
    weird = [None, True, -1, 0, 1e308, -1e308, "", "x" * 5000, [], {}, [1, "a"], {"a": None}, 2 ** 63,
             "\u0000", 0.5, "nan"]
    d = json.loads(json.dumps(doc))
    paths = []

    def walk(o, p):
        paths.append(p)
        if isinstance(o, dict):
            for k, v in o.items():
                walk(v, p + [k])
        elif isinstance(o, list):
            for i, v in enumerate(o[:4]):
                walk(v, p + [i])
    walk(d, [])
    if len(paths) < 2:
        return rnd.choice(weird)
    p = rnd.choice(paths[1:])
    o = d
    for k in p[:-1]:
        o = o[k]
    r = rnd.random()
    if r < 0.2 and isinstance(o, dict):
        del o[p[-1]]
    elif r < 0.3 and isinstance(o, dict):
        o["unknown_key"] = 1
    else:
        o[p[-1]] = rnd.choice(weird)
    return d


def c_inputs(count):
    rnd = random.Random(1702)
    src = A.src
    prof = json.load(open(os.path.join(src, "topologies", "profiles", "ring.json")))
    prof2 = json.load(open(os.path.join(src, "topologies", "profiles", "ib.json")))
    system = json.load(open(os.path.join(src, "topologies", "systems", "h200-sxm-8.json")))
    log = open(ncclt_log()).read()
    ncjson = open(os.path.join(src, "tests", "analysis", "data", "nccl-tests-2.19.6_all_reduce_h200x1.json")).read()
    base = json.load(open(good_run()))
    model = json.loads(subprocess.run([A.bin, "tune", "--plan-only", "-m", "resnet50"], capture_output=True,
                                      check=True).stdout)["model"]
    model["tensors"] = model["tensors"][:20]
    sim = ["sweep", "--backend", "sim", "-c", "allreduce", "-b", "8", "-e", "64", "-n", "1", "-w", "0", "-q"]
    kinds = [
        ("profile", lambda: json.dumps(mutate_json(rnd.choice([prof, prof2]), rnd)),
         lambda f, d: sim + ["-p", f, "--out", d]),
        ("system", lambda: json.dumps(mutate_json(system, rnd)), lambda f, d: sim + ["--system", f, "--out", d]),
        ("system_text", lambda: mutate_text(json.dumps(system, indent=1), rnd),
         lambda f, d: sim + ["--system", f, "--out", d]),
        ("baseline", lambda: json.dumps(mutate_json(base, rnd)),
         lambda f, d: ["preflight"] + BASE["preflight"] + ["--baseline", f, "--json", os.path.join(TMP, "pf.json")]),
        ("ncclt_report", lambda: mutate_text(log, rnd), lambda f, d: ["report", f]),
        ("ncclt_compare", lambda: mutate_text(log, rnd), lambda f, d: ["compare", ncclt_log(), f]),
        ("ncclt_plot", lambda: mutate_text(log, rnd), lambda f, d: ["plot", f, "--out", d]),
        ("ncclt_json", lambda: mutate_text(ncjson, rnd), lambda f, d: ["report", f]),
        ("model", lambda: json.dumps(mutate_json(model, rnd)), lambda f, d: ["tune", "--plan-only", "-m", f]),
        ("model_run", lambda: json.dumps(mutate_json(model, rnd)),
         lambda f, d: ["tune", "-m", f, "--backend", "mpi", "-n", "1", "-w", "0", "--budget", "0.01", "-q",
                       "--bucket-caps", "1", "--out", d]),
        ("tune_curve", lambda: json.dumps(mutate_json(base, rnd)),
         lambda f, d: ["tune", "--plan-only", "--curve", f]),
        ("matrix", lambda: mutate_text("8 16\n16 8\n", rnd),
         lambda f, d: ["sweep", "--backend", "mpi", "-c", "alltoallv", "-b", "64", "-e", "64", "-n", "1", "-w", "0",
                       "-q", "--matrix", f, "--out", d]),
    ]
    per = max(1, count // len(kinds))
    for name, make, cmdf in kinds:
        for i in range(per):
            body = make()
            f = os.path.join(TMP, "in-%s.json" % name)
            with open(f, "w", encoding="utf-8", errors="surrogateescape") as fh:
                fh.write(body if isinstance(body, str) else json.dumps(body))
            d = fresh("in-out")
            a = cmdf(f, d)
            rc, _, err, _, c = run(a, timeout=40)
            before = len(STATS[CUR]["findings"])
            judge(c, rc, err, outdirs=[d] if "--out" in a and a[0] != "plot" else [])
            if rc not in (0, 1, 2):
                finding("%s: exit %s on a mutated input" % (name, rc), c, rc, err)
            if rc == 2 and len(dlcomm_lines(err)) != 1:
                finding("%s: exit 2 with %d dlcomm lines" % (name, len(dlcomm_lines(err))), c, rc, err)
            if len(STATS[CUR]["findings"]) > before and A.keep:  # the input, to reproduce it
                os.makedirs(A.keep, exist_ok=True)
                shutil.copy(f, os.path.join(A.keep, "%s-%d.json" % (name, i)))


# --------------------------------------------------------------- readers --

def c_readers(count):
    """Type mutations of a real run.json (4 in 5) and random bytes (1 in 5)
    through report, compare and plot: 0, 1 or 2, never a hang, and a plot
    that says it wrote charts wrote them."""
    rnd = random.Random(1717)
    good = os.path.join(TMP, "readers-good")
    subprocess.run([A.bin, "sweep", "--backend", "mpi", "-c", "all", "-b", "8", "-e", "1K", "-n", "3",
                    "-w", "0", "-q", "--out", good], check=True)
    doc = json.load(open(os.path.join(good, "run.json")))
    for i in range(count):
        f = os.path.join(TMP, "m%d.json" % (i % 50))
        if i % 5 == 4:
            open(f, "wb").write(bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 4096))))
        else:
            json.dump(mutate_json(doc, rnd), open(f, "w"))
        for args in (["report", f], ["compare", os.path.join(good, "run.json"), f],
                     ["plot", f, "--out", fresh("plot")]):
            rc, out, err, _, c = run(args, timeout=20)
            judge(c, rc, err)
            if rc not in (0, 1, 2, "timeout"):
                finding("a reader exit %s" % rc, c, rc, err)
            if rc == 0 and args[0] == "plot":
                outd = args[-1]
                have = os.listdir(outd) if os.path.isdir(outd) else []
                if out.count(".png") and not have:
                    finding("plot claims charts it did not write", c, rc, err)


# ---------------------------------------------------------------- inject --

def c_inject(count):
    rnd = random.Random(1703)
    kinds = ["hang", "crash", "error", "slow", "corrupt"]
    near = ["hang", "crash:", ":0", "slow:0:default:1", "slow:0:default:0.5", "slow:0:default:nan",
            "slow:0:default:inf", "slow:*:default:1e308", "slow:0::2", "corrupt:-2", "corrupt:0x0",
            "corrupt: 0", "corrupt:0 ", " corrupt:0", "CORRUPT:0", "corrupt:00", "corrupt:+0",
            "corrupt:0:", "corrupt:0:mpi:2", "corrupt:0:mpi:2:x", "corrupt:1", "corrupt:2147483648",
            "error:0;hang:1", "error:0,hang:1", "error:*", "error:-1", "corrupt:0:nosuch", "\xff",
            "slow:0:mpi:2", "slow:0:mpi", "slow:0:mpi:1.0000001", "slow:0:mpi:2e0", "hang:0:ring",
            "corrupt:0:default", "", " ", "corrupt:0\n", "error:0:mpi:x"]
    valid_effect = {"corrupt": 1, "error": 3, "hang": 3, "slow": 0}
    for i in range(count):
        if i < len(near):
            v = near[i]
        else:
            parts = [rnd.choice(kinds + ["Hang", "crash ", "x", ""]),
                     rnd.choice(["0", "1", "*", "-1", "2", "x", "", "0.5"])]
            if rnd.random() < 0.5:
                parts.append(rnd.choice(["mpi", "default", "ring", "", "*", "nosuch"]))
                if rnd.random() < 0.6:
                    parts.append(rnd.choice(["2", "1", "0", "1e3", "-2", "nan", "x", "3.5"]))
            v = ":".join(parts)
        backend = rnd.choice(["mpi", "sim"])
        np_ = rnd.choice([0, 2])
        d = fresh("inj")
        a = ["sweep", "--backend", backend, "-c", "allreduce", "-b", "8", "-e", "64", "-n", "2", "-w", "0", "-q",
             "--timeout", "3", "--out", d]
        if backend == "sim":
            a += ["-p", "default,ring"]
        rc, _, err, _, c = run(a, env={"DLCOMM_INJECT": v}, mpi=np_, timeout=40)
        judge(c, rc, err, outdirs=[d])
        if rc == 2 and "DLCOMM_INJECT" not in err:
            finding("inject %r: exit 2 without naming DLCOMM_INJECT" % v, c, rc, err)
        if rc == 0 and v.strip():
            # exit 0 only where the documented effect leaves the run ok: slow, or a fault
            # planted on a profile this run does not have
            k = v.split(":")
            ok0 = k[0] == "slow" or (len(k) > 2 and k[2] and k[2] not in ("mpi", "default", "ring", "*"))
            if not ok0:
                finding("inject %r: exit 0 (ignored?)" % v, c, rc, err)
            if k[0] == "slow" and len(k) > 3 and k[3]:
                try:
                    fac = float(k[3])
                    if not (fac > 1):
                        finding("inject %r: a slow factor <= 1 accepted" % v, c, rc, err)
                except ValueError:
                    finding("inject %r: a non-number factor accepted" % v, c, rc, err)
            if len(k) > 2 and k[2] not in ("default", "ring", "*", ""):
                finding("inject %r: a profile this run does not have, exit 0" % v, c, rc, err)


# --------------------------------------------------------------- secrets --

def c_secrets(count):
    names = ["NCCL_IB_TOKEN", "HOROVOD_Api_Key", "NCCL_SECRET", "UCX_password", "OMPI_MCA_auth_x",
             "NCCL_private_KEY", "AWS_SECRET_ACCESS_KEY", "NCCL_COOKIE", "NCCL_X_CREDENTIALS", "GITHUB_TOKEN",
             "NCCL_URL", "HF_TOKEN", "NCCL_IB_KEY", "WANDB_API_KEY", "NCCL_Pwd"]
    keep = {"NCCL_ALGO": "Ring", "NCCL_IB_PKEY": "1"}
    for i, nm in enumerate(names[:max(3, count)]):
        for backend in ("sim",):
            prof = {"name": "sec%d" % i, "env": dict(keep, **{nm: "LEAKED-%d" % i})}
            f = os.path.join(TMP, "sec%d.json" % i)
            json.dump(prof, open(f, "w"))
            d = fresh("sec")
            a = ["sweep", "--backend", backend, "-c", "allreduce", "-b", "8", "-e", "8", "-n", "1", "-w", "0",
                 "-q", "-p", f, "--out", d]
            rc, out, err, _, c = run(a)
            judge(c, rc, err, outdirs=[d], want_run=True)
            blobs = []
            for root, _, files in os.walk(d):
                for x in files:
                    if x.endswith((".json", ".csv")):
                        blobs.append(open(os.path.join(root, x), errors="replace").read())
            if any("LEAKED" in b for b in blobs) or "LEAKED" in out + err:
                finding("secret %s of a profile's env recorded" % nm, c, rc, err)
            if rc == 0:
                penv = json.load(open(os.path.join(d, "run.json")))["profiles"][0].get("env", {})
                if penv.get("NCCL_ALGO") != "Ring":
                    finding("a profile's real setting dropped with the secret: %s" % penv, c, rc, err)
        # and the report/compare of such a run, and a profile given to preflight
        j = os.path.join(TMP, "pf-sec.json")
        rc, out, err, _, c = run(["preflight", "--no-gpu", "--quick", "--budget", "0.01", "-n", "1", "--sizes",
                                  "1K", "--check-size", "1K", "--scope-size", "1K", "--backend", "sim", "-p",
                                  os.path.join(TMP, "sec%d.json" % i), "--json", j], timeout=60)
        note(rc)
        if os.path.exists(j) and "LEAKED" in open(j).read():
            finding("secret %s in preflight's JSON" % nm, c, rc, err)


CLASSES = {"readers": (c_readers, 400), "argv": (c_argv, 200), "out": (c_out, 20), "stdio": (c_stdio, 40), "inputs": (c_inputs, 360),
           "inject": (c_inject, 120), "secrets": (c_secrets, 15)}


def main():
    global A, TMP, CUR
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mpirun", default="mpirun --oversubscribe")
    ap.add_argument("--src", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--json", help="write every class's figures and findings here")
    ap.add_argument("--keep", help="copy each input file that made a finding into this folder")
    ap.add_argument("classes", nargs="*", default=list(CLASSES))
    A = ap.parse_args()
    A.bin = os.path.abspath(A.bin)
    total = 0
    with tempfile.TemporaryDirectory(prefix="dlcomm-wide-") as t:
        TMP = t
        for c in A.classes:
            fn, n = CLASSES[c]
            CUR = c
            STATS[c] = {"runs": 0, "findings": [], "codes": {}}
            t0 = time.time()
            fn(max(1, int(n * A.scale)))
            s = STATS[c]
            s["seconds"] = round(time.time() - t0, 1)
            total += len(s["findings"])
            print("%-8s %5d runs %4d findings %6.1f s  exit codes %s" % (
                c, s["runs"], len(s["findings"]), s["seconds"], dict(sorted(s["codes"].items()))), flush=True)
            seen = set()
            for f in s["findings"]:
                if f["what"] in seen:
                    continue
                seen.add(f["what"])
                print("   %s\n     %s\n     %s" % (f["what"], f["cmd"], f["stderr"].strip()[-250:]))
            if s.get("accepted_invalid"):
                print("   (%d runs with an invalid value ended 0; see --json)" % len(s["accepted_invalid"]))
    if A.json:
        json.dump(STATS, open(A.json, "w"), indent=1)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
