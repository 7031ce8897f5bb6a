#!/usr/bin/env python3
"""Runs one `dlcomm` command (under mpirun, or directly) and checks what a
user relies on: the exit code, stderr, the wall time, and for a finished
sweep every field of run.json and run.csv against the options given.

  sweep_check.py --mpirun "CMD ..." --bin DLCOMM --np N [expectations] -- SWEEP ARGS
  sweep_check.py --direct --bin DLCOMM [expectations] -- ARGS

Without --out in the sweep arguments, a fresh folder is passed as --out.
Standard library and python3-jsonschema (the run record's schema)."""
import argparse
import csv
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import record_schema  # noqa: E402  (tests/record_schema.py: docs/schema/run.schema.json)

COLLS = ["allreduce", "allgather", "broadcast", "reducescatter", "alltoall", "sendrecv", "reduce",
         "gather", "scatter", "alltoallv"]
REDUCING = {"allreduce", "reducescatter", "reduce"}
ROOTED = {"broadcast", "reduce", "gather", "scatter"}
SPLIT = {"allgather", "reducescatter", "alltoall", "gather", "scatter", "alltoallv"}  # the size is divided among ranks
DTYPES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int32": 4, "int8": 1,
          "uint8": 1, "int64": 8, "uint32": 4, "uint64": 8, "fp8e4m3": 1, "fp8e5m2": 1}
# Other names -d takes for the same types: nccl-tests' and the fp8 spellings.
DTYPE_ALIASES = {"float": "float32", "half": "float16", "double": "float64", "int": "int32",
                 "f8e4m3": "fp8e4m3", "f8e5m2": "fp8e5m2", "fp8_e4m3": "fp8e4m3",
                 "fp8_e5m2": "fp8e5m2"}
AGG_ALIASES = {"0": "rank0", "1": "mean", "2": "min", "3": "max"}
OPS = ["sum", "prod", "min", "max", "avg"]
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
CSV_COLS = ("profile,backend,modelled,collective,dtype,op,root,placement,bytes_requested,bytes,"
            "count,ranks,iterations,converged,time_us_mean,time_us_p50,time_us_p95,time_us_p99,"
            "time_us_min,time_us_max,time_us_stdev,time_us_ci95,avg_us,algbw_gbps,busbw_gbps,"
            "wrong,group,group_ranks,stop").split(",")

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
    return cond


def size(s):
    m = re.fullmatch(r"([0-9.]+)([KMG]?)(i?B)?", s, re.I)
    return int(float(m.group(1)) * UNITS[m.group(2).upper()])


def factor(coll, n):
    if coll == "allreduce":
        return 2.0 * (n - 1) / n
    if coll in SPLIT:
        return (n - 1) / n
    return 1.0


def sizes(lo, hi, f, step):
    """dlcomm's size list (util/size.c), in Python."""
    out, s = [], float(lo)
    while s <= hi:
        out.append(int(s))
        nxt = s + step if step else math.floor(s * f)
        s = nxt if nxt > s else s + 1
    return out


def alltoallv_count(i, j, req, es, n, matrix):
    """Elements rank i sends to rank j: the matrix's bytes (16 B aligned), else
    the generated pattern (d/S of the size to the rank d ahead, at least one)."""
    if matrix:
        return (matrix[i][j] & ~15) // es
    if n == 1:
        return max(1, req // es)
    d = (j - i) % n
    return 0 if d == 0 else max(1, d * (req // es) // (n * (n - 1) // 2))


def moved_bytes(coll, req, es, n, matrix=None):
    """The documented rounding: whole elements (per rank where split), at least one."""
    if coll == "alltoallv":  # the largest per-rank send or receive total
        return es * max(max(sum(alltoallv_count(i, j, req, es, n, matrix) for j in range(n)),
                            sum(alltoallv_count(j, i, req, es, n, matrix) for j in range(n)))
                        for i in range(n))
    if coll in SPLIT:
        return max(1, req // es // n) * n * es
    return max(1, req // es) * es


def split_groups(spec, n):
    """--split as nccl-tests' NCCL_TESTS_SPLIT: rank r's colour is r OP value;
    groups numbered by colour, ranks in world order. None: no split."""
    if not spec:
        return None
    m = re.fullmatch(r"(MOD|DIV|AND|OR|%|/|&|\|)[: ]*(0x[0-9a-f]+|0b[01]+|[0-9]+)", spec, re.I)
    op, v = m.group(1).upper(), int(m.group(2), 0)
    f = {"MOD": lambda r: r % v, "%": lambda r: r % v, "DIV": lambda r: r // v,
         "/": lambda r: r // v, "AND": lambda r: r & v, "&": lambda r: r & v,
         "OR": lambda r: r | v, "|": lambda r: r | v}[op]
    colours = sorted({f(r) for r in range(n)})
    return [[r for r in range(n) if f(r) == c] for c in colours]


def sweep_request(args):
    """What the sweep arguments ask for, with dlcomm's defaults."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("-c", default="allreduce,allgather,broadcast")
    p.add_argument("-d", default="float32")
    p.add_argument("-o", default="sum")
    p.add_argument("-b", default="8")
    p.add_argument("-e", default="128M")
    p.add_argument("-f", type=float, default=2.0)
    p.add_argument("-i", default=None)
    p.add_argument("-r", type=int, default=0)
    p.add_argument("-n", type=int, default=0)
    p.add_argument("--placement", default="both")
    p.add_argument("--budget", type=float, default=0.1)
    p.add_argument("-a", "--aggregate", default="max")
    p.add_argument("--matrix")
    p.add_argument("--split")
    p.add_argument("--out")
    req, _ = p.parse_known_args(args)
    allof = lambda v, names: names if v == "all" else v.split(",")
    req.colls = allof(req.c, COLLS)
    req.dtypes = [DTYPE_ALIASES.get(d, d) for d in allof(req.d, list(DTYPES))]
    req.ops = allof(req.o, OPS)
    req.places = ["out", "in"] if req.placement == "both" else [req.placement]
    req.mat = None
    if req.matrix:
        with open(req.matrix) as f:
            req.mat = [[int(float(v)) for v in line.split()] for line in f if line.split()]
    req.sizes = sizes(size(req.b), size(req.e), req.f, size(req.i) if req.i else 0)
    return req


def near(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def check_row(row, req, n, wrong_rank, ranks=None):
    """n: the ranks of the row (its group's with --split); wrong_rank: the
    index in the row's per-rank arrays, None when the row must be clean;
    ranks: the modelled ranks busbw is for (the sim's), default n."""
    key = "%s/%s/%s/%s/%s/g%s" % (row["collective"], row["dtype"], row["op"], row["placement"],
                                  row["bytes_requested"], row.get("group", "-"))
    coll, es = row["collective"], DTYPES[row["dtype"]]
    # Sized for the ranks the row is for: a model's, not its processes.
    want_bytes = moved_bytes(coll, row["bytes_requested"], es, ranks or n, req.mat)
    check(row["bytes"] == want_bytes, "%s: bytes %s, want %s" % (key, row["bytes"], want_bytes))
    bus = ranks or n
    check(row["ranks"] == bus, "%s: ranks %s, want %s" % (key, row["ranks"], bus))
    check(row["root"] == (req.r if coll in ROOTED else -1), "%s: root %s" % (key, row["root"]))
    if req.n:
        check(row["iterations"] == req.n, "%s: %s iterations, -n %d" % (key, row["iterations"], req.n))
    check(row["iterations"] >= 1, "%s: no iterations" % key)
    t = row["time_us"]
    check(0 < t["min"] <= t["p50"] <= t["p95"] <= t["p99"] <= t["max"],
          "%s: percentiles out of order %s" % (key, t))
    # The mean is the timed batches', the spread a separate pass's (each call
    # timed on its own, at a cost): the mean need not lie between min and max.
    check(t["mean"] > 0 and t["stdev"] >= 0 and abs(row["avg_us"] - t["mean"]) <= 1e-9 * t["mean"],
          "%s: mean/stdev/avg_us %s %s" % (key, t, row["avg_us"]))
    f = factor(coll, bus)
    if bus == 1 and row["placement"] == "in":  # one rank in place moves nothing: no bandwidth
        check(row["algbw_gbps"] == 0 and row["busbw_gbps"] == 0,
              "%s: one rank in place moves nothing, yet algbw %s busbw %s" % (
                  key, row["algbw_gbps"], row["busbw_gbps"]))
    else:
        algbw = row["bytes"] / (t["mean"] * 1e-6) / 1e9
        check(near(row["algbw_gbps"], algbw, 1e-6),
              "%s: algbw %s, want %s" % (key, row["algbw_gbps"], algbw))
        check(near(row["busbw_gbps"] / row["algbw_gbps"], f, 1e-9) and near(row["busbw_factor"], f),
              "%s: busbw/algbw %s, want %s" % (key, row["busbw_gbps"] / row["algbw_gbps"], f))
    # -a: the row's mean against each rank's own mean (rank_time_us): every
    # timed call's time is part of its rank's total, so the aggregates order.
    rt = row.get("rank_time_us", [])
    agg = {"0": "rank0", "1": "mean", "2": "min", "3": "max"}.get(req.aggregate, req.aggregate)
    if rt:
        m, tol = t["mean"], 1e-6 * max(rt) + 1e-9
        ok = {"max": m >= max(rt) - tol, "min": m <= min(rt) + tol,
              "mean": abs(m - sum(rt) / len(rt)) <= tol, "rank0": abs(m - rt[0]) <= tol}[agg]
        check(ok, "%s: -a %s: mean %s against the ranks' %s" % (key, agg, m, rt))
    if ranks is not None:  # a model moves no data: nothing checked is never "0 wrong"
        check(row["wrong"] is None and row.get("wrong_per_rank") is None,
              "%s: a model's row says wrong %r, wrong_per_rank %r" % (key, row["wrong"], row.get("wrong_per_rank")))
        return
    wpr = row.get("wrong_per_rank", [])
    check(len(wpr) == n and len(row.get("rank_time_us", [])) == n, "%s: per-rank arrays" % key)
    check(sum(wpr) == row["wrong"], "%s: wrong %s != sum %s" % (key, row["wrong"], wpr))
    if wrong_rank is None:
        check(row["wrong"] == 0, "%s: %s wrong elements %s" % (key, row["wrong"], wpr))
    else:
        others = [w for r, w in enumerate(wpr) if r != wrong_rank]
        check(not any(others), "%s: wrong elements on ranks other than %d: %s" % (key, wrong_rank, wpr))


def check_run(out, req, n, code, wrong_rank, modelled=None):
    with open(os.path.join(out, "run.json")) as f:
        run = json.load(f)
    for e in record_schema.validate(run, os.path.join(out, "run.json")):
        check(False, "schema: " + e)
    check(run.get("schema") == 1 and run.get("tool") == "dlcomm", "schema/tool: %s %s" % (run.get("schema"), run.get("tool")))
    check(run.get("exit_code") == code, "run.json exit_code %s, process %s" % (run.get("exit_code"), code))
    fp = run["fingerprint"]
    ranks = sorted(r for h in fp["hosts"] for r in h["ranks"])
    check(fp["ranks"] == n and ranks == list(range(n)), "fingerprint ranks %s / %s" % (fp["ranks"], ranks))
    check(fp["nodes"] == len(fp["hosts"]) >= 1 and all(h["name"] for h in fp["hosts"]),
          "fingerprint hosts %s" % fp["hosts"])
    o = run["options"]
    # A list option is echoed as the names it selected, in dlcomm's order
    # (-c all: every name; nccl-tests' -d float: float32), -a as its name.
    canon = lambda asked, names: ",".join(x for x in names if x in asked)
    echo = {"collectives": canon(req.colls, COLLS), "datatype": canon(req.dtypes, list(DTYPES)),
            "op": canon(req.ops, OPS), "placement": req.placement,
            "minbytes": size(req.b), "maxbytes": size(req.e), "root": req.r, "iters": req.n,
            "aggregate": AGG_ALIASES.get(req.aggregate, req.aggregate),
            "budget": req.budget, "out": out}
    for k, v in echo.items():
        check(o.get(k) == v, "options.%s = %r, asked %r" % (k, o.get(k), v))
    for k in run.get("environment", {}):
        check(re.match(r"(NCCL|UCX|OMPI|PMIX|HOROVOD|CUDA|NVIDIA|OMP|SLURM|DLCOMM)_", k)
              and not re.search("KEY|TOKEN|SECRET|PASSW|AUTH", k), "environment records %s" % k)
    rows = [r for p in run["profiles"] for r in p["results"]]
    # --split: every case once per group, each row its group's: its ranks,
    # busbw from the group's size, the data checked against its ranks only.
    groups = split_groups(req.split, n) or [list(range(n))]
    if req.split:
        check(run.get("split", {}).get("groups") == groups and
              run["split"].get("ranks_per_group") == len(groups[0]),
              "run.json split %s, want groups %s" % (run.get("split"), groups))
    per = (modelled // len(groups)) if modelled else None
    want = {}
    for c in req.colls:
        for d in req.dtypes:
            for op in (req.ops if c in REDUCING else ["none"]):
                moved = lambda s: moved_bytes(c, s, DTYPES[d], per or len(groups[0]), req.mat)
                for i, s in enumerate(req.sizes):
                    # A size that rounds to the bytes of the one before is measured once.
                    if i and moved(s) == moved(req.sizes[i - 1]):
                        continue
                    for pl in req.places:
                        for g in range(len(groups)):
                            want[(c, d, op, s, pl, g)] = 0
    for r in rows:
        g = r.get("group", 0)
        k = (r["collective"], r["dtype"], r["op"], r["bytes_requested"], r["placement"], g)
        check(k in want, "unexpected row %s" % (k,))
        want[k] = want.get(k, 0) + 1
        if req.split:
            check(0 <= g < len(groups) and r.get("group_ranks") == groups[g],
                  "%s: group_ranks %s, want %s" % (k, r.get("group_ranks"), groups[min(g, len(groups) - 1)]))
        else:
            check("group" not in r and "group_ranks" not in r, "%s: a group without --split" % (k,))
        mine = groups[g] if 0 <= g < len(groups) else groups[0]
        wr = mine.index(wrong_rank) if wrong_rank in mine else None
        check_row(r, req, len(mine), wr, per)
        if wrong_rank is not None and wr is None:
            check(r["wrong"] == 0, "%s: wrong elements in a group without rank %d" % (k, wrong_rank))
    # Side by side: the groups agree every batch, so each case's groups ran as many calls.
    calls = {}
    for p in run["profiles"]:
        for r in p["results"]:
            calls.setdefault((p["name"], r["collective"], r["dtype"], r["op"],
                              r["bytes_requested"], r["placement"]), set()).add(r["iterations"])
    uneven = [k for k, v in calls.items() if len(v) > 1]
    check(not uneven, "groups of one case ran different counts of calls: %s" % uneven[:3])
    missing = [k for k, v in want.items() if v != 1]
    check(not missing, "%d cases missing or repeated, e.g. %s" % (len(missing), missing[:3]))
    statuses = {p["status"] for p in run["profiles"]}
    check(statuses == ({"ok"} if code == 0 else {"wrong"}), "profile status %s" % statuses)
    with open(os.path.join(out, "run.csv"), newline="") as f:
        table = list(csv.reader(f))
    check(table and table[0] == CSV_COLS, "run.csv header %s" % (table[:1],))
    check(len(table) - 1 == len(rows), "run.csv has %d rows, run.json %d results" % (len(table) - 1, len(rows)))
    for line, r in zip(table[1:], rows):
        check(line[3:6] == [r["collective"], r["dtype"], r["op"]] and int(line[9]) == r["bytes"],
              "run.csv row %s differs from run.json %s" % (line[:10], r["collective"]))
        grp = [str(r["group"]), " ".join(map(str, r["group_ranks"]))] if "group" in r else ["", ""]
        col = {name: i for i, name in enumerate(CSV_COLS)}
        got = [line[col["group"]], line[col["group_ranks"]]]
        check(got == grp, "run.csv group columns %s, run.json %s" % (got, grp))
        check(line[col["stop"]] == r["stop"], "run.csv stop %s, run.json %s" % (line[col["stop"]], r["stop"]))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpirun", help="the launcher command line")
    ap.add_argument("--direct", action="store_true", help="run dlcomm without mpirun")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--sub", default="sweep", help="the dlcomm subcommand")
    ap.add_argument("--env", action="append", default=[], help="K=V for the run")
    ap.add_argument("--expect-exit", type=int, default=0)
    ap.add_argument("--expect-stderr", help="regex one 'dlcomm:' stderr line must match")
    ap.add_argument("--one-error-line", action="store_true", help="exactly one 'dlcomm:' line on stderr")
    ap.add_argument("--expect-stdout", help="regex stdout must match")
    ap.add_argument("--max-seconds", type=float, default=300)
    ap.add_argument("--wrong-rank", type=int, help="wrong elements expected on this rank only")
    ap.add_argument("--no-files", action="store_true", help="no run.json/run.csv may appear")
    ap.add_argument("--modelled-ranks", type=int, help="a model's ranks (sim): rows are for them")
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    rest = a.rest[1:] if a.rest[:1] == ["--"] else a.rest

    tmp = tempfile.mkdtemp(prefix="dlcomm-it-")
    out = os.path.join(tmp, "run")
    if a.sub == "sweep" and not any(x == "--out" or x.startswith("--out=") for x in rest):
        rest = ["--out", out] + rest  # first, so that a value missing at the end stays missing
    elif a.sub == "sweep" and "--out" in rest:
        out = rest[rest.index("--out") + 1]
    cmd = [a.bin] + ([a.sub] if a.sub else []) + rest
    if not a.direct:
        cmd = shlex.split(a.mpirun) + ["-np", str(a.np)] + cmd
    env = dict(os.environ)
    env.pop("DLCOMM_INJECT", None)
    for kv in a.env:
        k, v = kv.split("=", 1)
        env[k] = v
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=a.max_seconds + 30)
        code, so, se = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        code, so, se = None, e.stdout or "", e.stderr or ""
    wall = time.monotonic() - t0
    print("$ %s\n  exit %s after %.1f s" % (" ".join(shlex.quote(c) for c in cmd), code, wall))

    check(code == a.expect_exit, "exit code %s, want %d" % (code, a.expect_exit))
    check(wall <= a.max_seconds, "took %.1f s, limit %.0f s" % (wall, a.max_seconds))
    ours = [l for l in se.splitlines() if l.startswith("dlcomm:")]
    if a.expect_stderr:
        check(any(re.search(a.expect_stderr, l) for l in ours),
              "no 'dlcomm:' stderr line matches /%s/" % a.expect_stderr)
    if a.one_error_line:
        check(len(ours) == 1, "%d 'dlcomm:' lines on stderr, want 1" % len(ours))
    if a.expect_stdout:
        check(re.search(a.expect_stdout, so), "stdout does not match /%s/" % a.expect_stdout)
    if a.no_files and out:
        found = [f for f in ("run.json", "run.csv") if os.path.exists(os.path.join(out, f))]
        check(not found, "bad input still wrote %s" % found)
    if a.sub == "sweep" and "--help" not in rest and code in (0, 1) and a.expect_exit in (0, 1):
        req = sweep_request(rest)
        if check(os.path.exists(os.path.join(out, "run.json")), "no run.json in %s" % out):
            rows = check_run(out, req, a.np, code, a.wrong_rank, a.modelled_ranks)
            if a.wrong_rank is not None:
                def at(r):  # the rank's place in the row's arrays (its group's)
                    g = r.get("group_ranks", list(range(a.np)))
                    return g.index(a.wrong_rank) if a.wrong_rank in g else None
                named = [r for r in rows if at(r) is not None and r["wrong_per_rank"][at(r)] > 0]
                check(named, "no row names rank %d in wrong_per_rank" % a.wrong_rank)
                check(all(r["wrong"] == 1 for r in rows if r["collective"] == "allreduce"
                          and at(r) is not None),
                      "one corrupt element per case should count one wrong")
            print("  %d results checked" % len(rows))

    if failures:
        print("--- stderr ---\n%s--- stdout (tail) ---\n%s" % (se, "\n".join(so.splitlines()[-15:])))
        for f in failures[:30]:
            print("FAIL: " + f)
        print("(%d failures; output kept in %s)" % (len(failures), tmp))
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("  ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
