#!/usr/bin/env python3
"""Writes the nccl-tests version corpus: one stdout log per nccl-tests release
from 2.0.0 to 2.19.6, in the layout that release prints (worked out from its
print statements, release by release), plus the 2.19.6 variants (-I 1, -S 1,
-C 1, -J with cpu_time), the collectives whose columns differ up to 2.11, and
concatenated logs. expected.json says what a reader must make of each file.

  ncclt_corpus.py DIR

The figures are made up (an 8-rank all-reduce on two hosts whose time is
8 us + bytes / 100 GB/s); only the layout is nccl-tests'. The corpus is
checked in (tests/data/ncclt-corpus/); rerun this after changing it.
"""
import json
import os
import sys

RELEASES = ("2.0.0 2.9.0 2.10.0 2.10.1 2.11.0 2.13.0 2.13.1 2.13.2 2.13.3 2.13.4 2.13.5 "
            "2.13.6 2.13.7 2.13.8 2.13.9 2.13.10 2.13.11 2.13.12 2.13.13 2.14.0 2.14.1 "
            "2.15.0 2.15.1 2.15.2 2.16.0 2.16.1 2.16.2 2.16.3 2.16.4 2.16.5 2.16.6 2.16.7 "
            "2.16.8 2.16.9 2.17.0 2.17.1 2.17.2 2.17.3 2.17.4 2.17.5 2.17.6 2.17.7 2.17.8 "
            "2.17.9 2.17.10 2.18.0 2.18.1 2.18.2 2.18.3 2.18.5 2.19.0 2.19.1 2.19.2 2.19.3 "
            "2.19.4 2.19.5 2.19.6").split()
SIZES = [8 << (3 * i) for i in range(9)]  # 8 B .. 128 MiB
NRANKS = 8
# Columns between type and the figures, up to 2.11 (each test its own header).
OLD_COLS = {"all_reduce": ["redop"], "all_gather": [], "reduce_scatter": ["redop"],
            "broadcast": ["root"], "reduce": ["redop", "root"], "alltoall": ["redop"],
            "sendrecv": [], "gather": ["root"], "scatter": ["root"]}
FACTOR = {"all_reduce": 2.0 * (NRANKS - 1) / NRANKS, "all_gather": (NRANKS - 1) / NRANKS,
          "reduce_scatter": (NRANKS - 1) / NRANKS, "broadcast": 1.0, "reduce": 1.0}
ROOTED = ("broadcast", "reduce", "gather", "scatter")
REDUCING = ("all_reduce", "reduce_scatter", "reduce")


def v(s):
    return tuple(int(x) for x in s.split("."))


def time_str(us, new):
    if new:
        return float_str(us, 7)
    return "%7.0f" % us if us > 10000 else "%7.1f" % us if us > 100 else "%7.2f" % us


def float_str(x, w):
    """The 2.17.3+ way: 2, 1, 0 decimals, then an exponent, within w characters."""
    for f in ("%*.2f", "%*.1f", "%*.0f"):
        s = f % (w, x)
        if len(s) <= w:
            return s
    return ("%*.1e" if w >= 7 else "%*.0e") % (w, x)


def body(ver, us, algbw, busbw, check):
    if ver < (2, 13):
        return "  %7s  %6.2f  %6.2f  %5.0e" % (time_str(us, False), algbw, busbw, check)
    if ver < (2, 17, 3):
        return "  %7s  %6.2f  %6.2f  %5g" % (time_str(us, False), algbw, busbw, check)
    return "  %7s  %6s  %6s  %6g" % (float_str(us, 7), float_str(algbw, 6), float_str(busbw, 6),
                                    check)


def rank_lines(ver):
    out = []
    for r in range(NRANKS):
        host = "nodeA" if r < 4 else "nodeB"
        if ver <= (2, 13, 3):
            out.append("#   Rank %2d Pid %6d on %10s device %2d [0x%02x] NVIDIA H100 80GB HBM3"
                       % (r, 4000 + r, host, r % 4, 0x18 + r % 4))
        elif ver < (2, 15):
            out.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] NVIDIA H100 80GB HBM3"
                       % (r, 0, 4000 + r, host, r % 4, 0x18 + r % 4))
        else:
            out.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] NVIDIA H100 80GB HBM3"
                       % (r, 0, 4000 + r, host, r % 4, 0, 0x18 + r % 4, 0))
    return out


def preamble(ver, coll, iters=20, per_iter=False):
    out = []
    if ver >= (2, 17, 4):
        out.append("# nccl-tests version %d.%d.%d nccl-headers=22703 nccl-library=22703" % ver)
    if ver >= (2, 16, 7):
        out.append("# Collective test starting: %s_perf" % coll)
    line = ("# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 8(factor) warmup iters: 5 "
            "iters: %d " % iters)
    if ver >= (2, 13):
        line += "agg iters: 1 validation: 1 graph: 0"
        if ver >= (2, 18, 2):
            line += " unalign: 0"
    else:
        line += "validation: 1 "
    out.append(line)
    if per_iter:
        out.append("# Per-Iteration Report: CUDA event timing; i_* uses max over process rows ")
    out += ["#", "# Using devices"] + rank_lines(ver)
    return out


def header(ver, coll, cputime=False, per_iter=False, stamp=False):
    t = "cputime" if cputime else "time"
    if ver < (2, 13):
        w = 6 if ver < (2, 10) else 8
        cols = OLD_COLS[coll]
        lead = "# %10s  %12s  %*s" % ("size", "count", w, "type")
        lead += "".join("  %6s" % c for c in cols)
        fig = "  %7s  %6s  %6s  %5s" % ("time", "algbw", "busbw", "error")
        units = "# %10s  %12s  %*s" % ("(B)", "(elements)", w, "") + "  %6s" % "" * len(cols)
        ufig = "  %7s  %6s  %6s  %5s" % ("(us)", "(GB/s)", "(GB/s)", "")
        return ["#", "# %10s  %12s  %*s" % ("", "", w, "") + "  %6s" % "" * len(cols) +
                "            out-of-place                       in-place          ",
                lead + fig + fig, units + ufig + ufig]
    lead = "# %10s  %12s  %8s  %6s  %6s" % ("size", "count", "type", "redop", "root")
    fig = "  %7s  %6s  %6s  %6s" % (t, "algbw", "busbw", "#wrong")
    if per_iter:
        fig += "  %7s  %7s  %7s  %7s" % ("i_min", "i_max", "i_p99", "i_cv%")
    tail = " %*s" % (19, "timestamp") if stamp else ""
    units = "# %10s  %12s  %8s  %6s  %6s" % ("(B)", "(elements)", "", "", "")
    ufig = "  %7s  %6s  %6s  %6s" % ("(us)", "(GB/s)", "(GB/s)", "")
    if per_iter:
        ufig += "  %7s  %7s  %7s  %7s" % ("(us)", "(us)", "(us)", "(%)")
    return ["#", "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place"
            % ("", "", "", "", ""), lead + fig + fig + tail,
            units + ufig + ufig + (" %*s" % (19, "%Y-%m-%d %H:%M:%S") if stamp else "")]


def row_lead(ver, coll, size, count):
    if ver < (2, 13):
        w = 6 if ver < (2, 10) else 8
        s = "%12d  %12d  %*s" % (size, count, w, "float")
        for c in OLD_COLS[coll]:
            s += "  %6s" % "sum" if c == "redop" else "  %6i" % 0
        return s
    op = "sum" if coll in REDUCING else "none"
    return "%12d  %12d  %8s  %6s  %6i" % (size, count, "float", op, 0 if coll in ROOTED else -1)


def rows(ver, coll, slow=1.0, per_iter=False, stamp=False, delta=5e-07):
    out = []
    for size in SIZES:
        line = row_lead(ver, coll, size, size // 4)
        for place in (0, 1):
            us = (8.0 + size / 100e3) * slow * (1.0 if place == 0 else 0.98)
            algbw = size / us / 1e3
            check = delta if ver < (2, 13) else 0
            line += body(ver, us, algbw, algbw * FACTOR.get(coll, 1.0), check)
            if per_iter:
                line += "  %7s  %7s  %7s  %7s" % (float_str(us * 0.9, 7), float_str(us * 1.2, 7),
                                                  float_str(us * 1.1, 7), float_str(3.5, 7))
        if stamp:
            line += "%21s" % "2026-12-02 12:54:19"
        out.append(line)
    return out


def footer(ver, coll, oob=0):
    out = ["# Out of bounds values : %d %s" % (oob, "FAILED" if oob else "OK"),
           "# Avg bus bandwidth    : 12.345 ", "#"]
    if ver >= (2, 16, 7):
        out.append("# Collective test concluded: %s_perf" % coll)
    return out


def log(ver, coll="all_reduce", slow=1.0, **kw):
    flags = {k: kw[k] for k in ("per_iter", "stamp") if k in kw}
    lines = preamble(ver, coll, per_iter=kw.get("per_iter", False))
    lines += header(ver, coll, cputime=kw.get("cputime", False), **flags)
    oob = kw.get("oob", 0)
    lines += rows(ver, coll, slow, delta=2.0 if oob else 5e-07, **flags) + footer(ver, coll, oob)
    return "\n".join(lines) + "\n"


def json_doc(cputime):
    res = []
    for size in SIZES:
        e = {"size": size, "count": size // 4, "type": "float", "redop": "sum", "root": "    -1"}
        for key, us in (("out_of_place", 8.0 + size / 100e3), ("in_place", 7.9 + size / 100e3)):
            algbw = size / us / 1e3
            e[key] = {("cpu_time" if cputime else "time"): us, "alg_bw": algbw,
                      "bus_bw": algbw * 1.75, "nwrong": 0.0}
        e.update({"actual_iterations": 20, "experiment_name": ""})
        res.append(e)
    devs = [{"rank": r, "group": 0, "pid": 4000 + r, "hostname": "nodeA" if r < 4 else "nodeB",
             "device": r % 4, "device_hex": "0000:18:00", "device_info": "NVIDIA H100"}
            for r in range(NRANKS)]
    args = ["./build/all_reduce_perf", "-b", "8", "-e", "128M", "-f", "8", "-J", "x.json"]
    if cputime:
        args += ["-C", "1"]
    return json.dumps({"version": 3, "start_time": "2026-12-02 12:54:19", "args": args,
                       "nccl_version": 22703, "config": {"devices": devs}, "results": res})


def ok(coll="allreduce", op="sum", rows=2 * len(SIZES), wrong="0", tool=None):
    return {"exit": 0, "collective": coll, "op": op, "rows": rows, "ranks": NRANKS, "hosts": 2,
            "wrong": wrong, "tool": tool}


def refused(why):
    return {"exit": 2, "says": why}


def corpus():
    files = {}
    for rel in RELEASES:
        ver = v(rel)
        files["all_reduce_perf-%s.txt" % rel] = (log(ver), ok(
            wrong="unchecked" if ver < (2, 13) else "0",
            tool="nccl-tests %s" % rel if ver >= (2, 17, 4) else "nccl-tests"))
    for rel in ("2.0.0", "2.11.0"):
        ver = v(rel)
        for coll, op in (("all_gather", "none"), ("reduce_scatter", "sum"), ("broadcast", "none"),
                         ("reduce", "sum")):
            files["%s_perf-%s.txt" % (coll, rel)] = (log(ver, coll), ok(
                coll.replace("_", ""), op, wrong="unchecked"))
    # up to 2.11 the log's own check is its "Out of bounds values" line
    bad = ok(wrong="unchecked")
    bad["status"] = "wrong"
    files["all_reduce_perf-2.11.0-oob.txt"] = (log(v("2.11.0"), oob=4), bad)
    # no collective in the text (before 2.16.7) nor in the name
    files["run-2.16.0.txt"] = (log(v("2.16.0")), refused("does not name its collective"))
    files["run-2.11.0.txt"] = (log(v("2.11.0")), refused("does not name its collective"))
    files["run-2.11.0-reduce-columns.txt"] = (log(v("2.11.0"), "reduce"), ok("reduce", "sum",
                                                                             wrong="unchecked"))
    # 2.19.6's options that change the columns
    files["all_reduce_perf-2.19.6-I1.txt"] = (log(v("2.19.6"), per_iter=True), ok(
        tool="nccl-tests 2.19.6"))
    files["all_reduce_perf-2.19.6-S1.txt"] = (log(v("2.19.6"), stamp=True), ok(
        tool="nccl-tests 2.19.6"))
    files["all_reduce_perf-2.19.6-I1-S1.txt"] = (log(v("2.19.6"), per_iter=True, stamp=True), ok(
        tool="nccl-tests 2.19.6"))
    files["all_reduce_perf-2.19.6-C1.txt"] = (log(v("2.19.6"), cputime=True), refused("-C 1"))
    files["all_reduce_perf-2.19.6.json"] = (json_doc(False), ok())
    files["all_reduce_perf-2.19.6-C1.json"] = (json_doc(True), refused("-C 1"))
    # two runs in one file: refused in every layout
    for rel in ("2.0.0", "2.11.0", "2.13.3", "2.16.0", "2.19.6"):
        files["all_reduce_perf-%s-twice.txt" % rel] = (log(v(rel)) + log(v(rel), slow=1.5),
                                                      refused("holds 2 nccl-tests runs"))
    return files


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    expected = {}
    for name, (text, exp) in sorted(corpus().items()):
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
        expected[name] = exp
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
