#!/usr/bin/env python3
"""What a person reads from `dlcomm sweep` and friends, run for real.

usage: output_check.py CASE DLCOMM WORKDIR REFERENCE_TXT MPIRUN...

header   the run header (backend and why, hosts, each rank's host and GPU,
         versions) and footer (wrong elements, busbw, rows not converged,
         stragglers, where the files went), with -q too; -q drops the
         tables and nothing else
columns  the table says which figures are batches and which single calls,
         and each row why its timing stopped (run.json and run.csv agree)
ncclt    --format nccl-tests: nccl-tests' own headers (byte for byte
         against a real nccl-tests log), a row per size with out-of-place
         and in-place side by side, read back by dlcomm's nccl-tests reader
sim      a model's rows are sized by its ranks, say "-" (null) where nothing
         was checked, and every output gives the one rank count
history  `dlcomm history` with no folder reads ./results
tie      report calls a band's best and next inside the noise a tie
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys

CASE, BIN, WORK, REF = sys.argv[1:5]
MPIRUN = sys.argv[5:]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(args, expect=0, env=None, cwd=None):
    p = subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd)
    if expect is not None and p.returncode != expect:
        fail(f"{' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}\n{p.stderr}")
    return p


def sweep(np, args, env=None):
    """mpirun -np NP dlcomm sweep ARGS, env exported to the ranks."""
    xs = [a for k in (env or {}) for a in ("-x", k)]
    return run(MPIRUN[:1] + xs + MPIRUN[1:] + ["-np", str(np), BIN, "sweep"] + args,
               env=dict(os.environ, **(env or {})))


def fresh(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    return d


def load(d):
    with open(os.path.join(d, "run.json")) as f:
        return json.load(f)


def lines_of(out, prefix):
    return [l for l in out.splitlines() if l.startswith(prefix)]


def case_header():
    out = fresh("header")
    host = os.uname().nodename
    # One rank slowed on purpose, with -q: the findings must stay.
    p = sweep(4, ["-c", "allreduce,allgather", "-b", "1K", "-e", "64K", "-f", "4", "-q", "--out", out],
              env={"DLCOMM_INJECT": "slow:2:*:4"})
    doc = load(out)
    body = [l for l in p.stdout.splitlines() if l and not l.startswith("#")]
    if body:
        fail(f"-q printed table rows: {body[:3]}")
    be = doc["backend"]
    want = "# backend %s (%s)" % (be["name"], be["why"])
    if want not in p.stdout or not be["why"]:
        fail(f"no backend line {want!r}:\n{p.stdout}")
    if be["name"] == "mpi" and not be["why"].startswith("auto -> mpi: "):
        fail(f"auto fell back to mpi without saying why: {be}")
    if not re.search(r"^# host %s: ranks 0-3 -> " % re.escape(host), p.stdout, re.M):
        fail(f"no rank -> host/GPU line:\n{p.stdout}")
    if not re.search(r"^# versions: dlcomm \S+; MPI ", p.stdout, re.M):
        fail(f"no versions line:\n{p.stdout}")
    rows = doc["profiles"][0]["results"]
    nconv = sum(1 for r in rows if not r["converged"])
    prof = lines_of(p.stdout, "# profile mpi: ")
    if len(prof) != 1 or f"{len(rows)} rows; 0 wrong elements; busbw avg " not in prof[0] or \
            (nconv and f"{nconv} rows not converged" not in prof[0]) or \
            (not nconv and "every row converged" not in prof[0]):
        fail(f"footer {prof}, run.json has {len(rows)} rows, {nconv} not converged")
    peak = max(r["busbw_gbps"] for r in rows)
    if "peak %.2f GB/s" % peak not in prof[0]:
        fail(f"footer peak is not run.json's {peak:.2f}: {prof}")
    st = lines_of(p.stdout, "# stragglers:")
    if len(st) != 1 or f"rank 2 ({host}, no GPU) late in " not in st[0]:
        fail(f"-q hid the straggler, or it is not named: {st}")
    if f"# wrote {out}/run.json and {out}/run.csv" not in p.stdout:
        fail(f"-q hid where the files went:\n{p.stdout}")
    # Without -q: the same header, a legend, the tables.
    out2 = fresh("header-tables")
    p = sweep(4, ["-c", "allreduce", "-b", "1K", "-e", "4K", "-f", "4", "--out", out2])
    if not lines_of(p.stdout, "# columns: time = the mean per call over back-to-back batches"):
        fail("no legend of the columns above the tables")
    if not [l for l in p.stdout.splitlines() if l and not l.startswith("#")]:
        fail("no table rows without -q")


def table_rows(out):
    """The table's rows: (bytes, place, mean, p50, p99, wrong, stop, chose)."""
    rows = []
    for l in out.splitlines():
        t = l.split()
        if l.startswith("#") or len(t) < 15:
            continue
        rows.append((int(t[0]), t[5], float(t[6]), float(t[7]), float(t[8]), t[11], t[14], t[13]))
    return rows


def case_columns():
    out = fresh("columns")
    # A budget far too small for the CI target: rows stop on the budget, and say so.
    p = sweep(4, ["-c", "allreduce", "-b", "8", "-e", "64K", "-f", "8", "--budget", "0.002",
                  "--ci-target", "0.001", "--out", out])
    hdr = [l for l in p.stdout.splitlines() if l.startswith("#") and " size " in l]
    if not hdr or not re.search(r"\btime\b.*\bp50\b.*\bp99\b.*#wrong\s+iters\s+chose\s+stop", hdr[0]):
        fail(f"table header {hdr[:1]}: no time, p50, p99, chose and stop columns")
    units = [l for l in p.stdout.splitlines() if l.startswith("#") and "(elements)" in l]
    if not units or units[0].count("(us,call)") != 2 or "(us,batch)" not in units[0]:
        fail(f"time, p50 and p99 are not labelled batches and single calls: {units[:1]}")
    doc = load(out)
    rows = doc["profiles"][0]["results"]
    shown = table_rows(p.stdout)
    if len(shown) != len(rows):
        fail(f"{len(shown)} table rows, run.json {len(rows)}")
    for t, r in zip(shown, rows):
        if t[6] != r["stop"] or r["stop"] not in ("ci", "budget", "max-iters", "fixed", "noisy", "no-op"):
            fail(f"row {t}: stop {t[6]!r}, run.json {r['stop']!r}")
        if r["converged"] != (r["stop"] in ("ci", "no-op")):
            fail(f"row {t}: converged {r['converged']} but stop {r['stop']}")
    if any(t[7] != "-" or "algo" in r for t, r in zip(shown, rows)):
        fail(f"mpi says nothing of a choice, yet rows show one: {shown[:2]}")
    if not any(r["stop"] in ("budget", "noisy") for r in rows):
        fail("a 2 ms budget with a 0.1% target: no row stopped on the budget")
    with open(os.path.join(out, "run.csv"), newline="") as f:
        table = list(csv.DictReader(f))
    if [c["stop"] for c in table] != [r["stop"] for r in rows]:
        fail("run.csv's stop column is not run.json's")
    # A target no host meets: each row gives up once a quarter of its budget
    # shows it would not converge in the rest, says so, and the footer counts it.
    # (Calls of 100 us and more: 0.01% of them is over the 0.005 us floor.)
    noisy = fresh("columns-noisy")
    p = sweep(2, ["-c", "allreduce", "-b", "1M", "-e", "4M", "-f", "4", "--budget", "0.3",
                  "--ci-target", "0.0001", "--max-iters", "100000000", "-q", "--out", noisy])
    rows = load(noisy)["profiles"][0]["results"]
    if any(r["stop"] != "noisy" or r["converged"] or r["iterations"] < 5 for r in rows):
        fail("a 0.01%% target: rows %s" % [(r["stop"], r["converged"], r["iterations"]) for r in rows])
    prof = lines_of(p.stdout, "# profile mpi: ")
    if not prof or "%d rows not converged (budget 0, noisy %d," % (len(rows), len(rows)) not in prof[0]:
        fail(f"footer does not count the noisy rows: {prof}")
    fixed = fresh("columns-fixed")
    p = sweep(2, ["-c", "allreduce", "-b", "8", "-e", "64", "-n", "5", "-q", "--out", fixed])
    if {r["stop"] for r in load(fixed)["profiles"][0]["results"]} != {"fixed"}:
        fail("-n rows do not say fixed")
    # One rank in place moves nothing: timed over its first batches only, said
    # in the table and run.json, converged; out of place runs to its target.
    one = fresh("columns-one")
    p = sweep(1, ["-c", "allreduce,broadcast", "-b", "8", "-e", "4K", "-f", "8", "--out", one])
    rows = load(one)["profiles"][0]["results"]
    shown = table_rows(p.stdout)
    for t, r in zip(shown, rows):
        inplace = r["placement"] == "in"
        if (r["stop"] == "no-op") != inplace or t[6] != r["stop"] or (inplace and not r["converged"]):
            fail(f"one rank, {r['placement']}-place row {t}: stop {r['stop']}, converged {r['converged']}")
        if inplace and (r["algbw_gbps"] != 0 or r["iterations"] < 5):
            fail(f"one rank in place: algbw {r['algbw_gbps']}, {r['iterations']} calls")
    if "no-op (one rank in place" not in p.stdout:
        fail("the table's legend does not say what no-op means")


def ref_headers():
    with open(REF) as f:
        lines = f.read().splitlines()
    i = next(k for k, l in enumerate(lines) if "out-of-place" in l)
    return lines[i:i + 3]


def case_ncclt():
    out = fresh("ncclt")
    p = sweep(4, ["-c", "allreduce,allgather", "-b", "8", "-e", "4K", "-f", "4", "--format",
                  "nccl-tests", "--out", out])
    lines = p.stdout.splitlines()
    want = ref_headers()
    starts = [k for k, l in enumerate(lines) if "out-of-place" in l]
    if len(starts) != 2:
        fail(f"{len(starts)} nccl-tests blocks, want one per collective:\n{p.stdout}")
    for k in starts:
        if lines[k:k + 3] != want:
            fail("headers differ from nccl-tests':\n%s\nnccl-tests:\n%s" % ("\n".join(lines[k:k + 3]),
                                                                             "\n".join(want)))
    doc = load(out)
    rows = doc["profiles"][0]["results"]
    # One line per size, out-of-place and in-place side by side, widths as nccl-tests'.
    ref_row = next(l for l in open(REF).read().splitlines() if re.match(r"^\s+\d+\s+\d+\s+float", l))
    data = [l for l in lines if re.match(r"^\s+\d+\s+\d+\s+\w+\s+\w+\s+-?\d+\s", l)]
    sizes = {(r["collective"], r["bytes"]) for r in rows}
    if len(data) != len(sizes):
        fail(f"{len(data)} rows for {len(sizes)} sizes:\n" + "\n".join(data))
    for l in data:
        if len(l.split()) != 13 or len(l) != len(ref_row):
            fail(f"row {l!r}: not nccl-tests' 13 columns of its widths ({len(ref_row)} chars)")
    if "# Collective test starting: all_reduce_perf" not in p.stdout or \
            "# Collective test concluded: all_gather_perf" not in p.stdout or \
            not lines_of(p.stdout, "# Avg bus bandwidth    : "):
        fail("no nccl-tests preamble and closing lines")
    # dlcomm's own reader of nccl-tests logs reads one block back: the same rows.
    one = fresh("ncclt-one")
    p = sweep(4, ["-c", "allreduce", "-b", "8", "-e", "4K", "-f", "4", "--format", "nccl-tests",
                  "--out", one])
    log = os.path.join(WORK, "ncclt-one.log")
    with open(log, "w") as f:
        f.write(p.stdout)
    rep = json.loads(run([BIN, "report", log, "--json"]).stdout)
    if rep["format"] != "nccl-tests text" or rep["ranks"] != 4:
        fail(f"the log is not read as a 4-rank nccl-tests run: {rep['format']} {rep['ranks']}")
    cmp = os.path.join(WORK, "ncclt-cmp.json")
    run([BIN, "compare", one, log, "--json", cmp], expect=None)
    c = json.load(open(cmp))
    rows = load(one)["profiles"][0]["results"]
    if len(c["rows"]) != len(rows):
        fail(f"compare paired {len(c['rows'])} of {len(rows)} rows of a run and its own log")
    for r in c["rows"]:
        if abs(r["new"] - r["base"]) > 0.01 + 0.005 * abs(r["base"]):
            fail(f"the log's figure is not the run's: {r}")


def case_sim():
    out = fresh("sim")
    host = os.uname().nodename
    p = sweep(4, ["--backend", "sim", "--system", "h200-sxm-8", "--sim-nodes", "8", "-p",
                  "default,ring", "-c", "allgather,allreduce", "-b", "8", "-e", "1K", "-f", "2",
                  "--out", out, "--prometheus", os.path.join(WORK, "sim.prom"),
                  "--html", os.path.join(WORK, "sim.html")])
    doc = load(out)
    rows = [r for pr in doc["profiles"] for r in pr["results"]]
    ag = [r for r in rows if r["collective"] == "allgather"]
    # 64 modelled ranks x one float32 each: 256 B, asked for by 8 B and measured once.
    first = [r for r in ag if r["bytes_requested"] == 8]
    if not first or any(r["bytes"] != 256 or r["count"] != 1 or r["ranks"] != 64 for r in first):
        fail(f"all-gather of 8 B on 64 modelled ranks: {[(r['bytes'], r['count'], r['ranks']) for r in first]}")
    if any(r["bytes_requested"] in (16, 32, 64, 128) for r in ag):
        fail("sizes that round to 256 B were measured again")
    if any(r["wrong"] is not None or r.get("wrong_per_rank") is not None for r in rows):
        fail("a model's rows say 0 wrong: nothing was checked")
    tab = [l.split() for l in p.stdout.splitlines() if l and not l.startswith("#")]
    if not tab or any(t[11] != "-" for t in tab):
        fail(f"#wrong of unchecked rows is not '-': {tab[:2]}")
    # The model's choice, row by row: the chose column is run.json's, labelled a model's.
    shown = table_rows(p.stdout)
    if [t[7] for t in shown] != [f"{r.get('algo')}/{r.get('proto')}" for r in rows] or \
            any(r.get("choice_from") != "model" or "nchannels" in r for r in rows):
        fail(f"the chose column is not run.json's modelled choice: {[t[7] for t in shown][:4]}")
    ring = [r["algo"] for pr in doc["profiles"] if pr["name"] == "ring" for r in pr["results"]]
    tree = [r for pr in doc["profiles"] if pr["name"] == "default" for r in pr["results"]
            if r["collective"] == "allreduce" and r["algo"] == "Tree"]
    if set(ring) != {"Ring"} or not tree:
        fail(f"NCCL_ALGO=Ring not modelled as Ring ({set(ring)}), or 64 ranks' small all-reduce "
             "not Tree under default")
    words = "64 modelled ranks (8 nodes), carried by 4 processes on 1 host"
    rep = run([BIN, "report", out]).stdout
    if words not in rep:
        fail(f"report: not {words!r}:\n{rep[:600]}")
    page = open(os.path.join(WORK, "sim.html")).read()
    if words not in page:
        fail(f"the report page does not give {words!r}")
    if "modelled: " not in page or "what the model assumed" not in page:
        fail("the page shows what NCCL used for a model, not labelled as modelled")
    hist = run([BIN, "history", out]).stdout
    if words not in hist:
        fail(f"history: not {words!r}:\n{hist[:600]}")
    prom = open(os.path.join(WORK, "sim.prom")).read()
    info = re.search(r"^dlcomm_run_info\{(.*)\} 1$", prom, re.M)
    if not info or 'ranks="64"' not in info.group(1) or 'processes="4"' not in info.group(1):
        fail(f"Prometheus run_info: {info and info.group(1)}")
    if not re.search(r'^dlcomm_busbw_gbps\{.*ranks="64"', prom, re.M):
        fail("Prometheus rows are not for the 64 modelled ranks")
    head = [l for l in p.stdout.splitlines() if l.startswith("# modelled: ")]
    if head != ["# modelled: 64 ranks (8 nodes x 8 GPUs, h200-sxm-8), carried by 4 processes"]:
        fail(f"the header's rank count: {head}")
    foot = lines_of(p.stdout, "# profile default: ")
    if not foot or "wrong elements - (not checked: a model moves no data)" not in foot[0]:
        fail(f"the footer says nothing about the unchecked rows: {foot}")
    if host not in p.stdout:
        fail("the header does not name the host carrying the model")


def case_history():
    d = fresh("history")
    os.makedirs(d)
    run([BIN, "history"], expect=2, cwd=d)  # no results here: one line, exit 2
    sweep(2, ["--backend", "sim", "-c", "allreduce", "-b", "8", "-e", "64", "-q", "--out",
              os.path.join(d, "results", "one")])
    p = run([BIN, "history"], cwd=d)
    if "history: 1 runs" not in p.stdout:
        fail(f"history with no folder did not read ./results:\n{p.stdout}{p.stderr}")


def case_tie():
    out = fresh("tie")
    # default and tree pick the same model on one node: one time, so a tie.
    sweep(4, ["--backend", "sim", "-p", "default,tree", "-c", "allreduce", "-b", "8", "-e", "1M",
              "-q", "--out", out])
    rep = run([BIN, "report", out]).stdout
    bands = [l for l in rep.splitlines() if l.strip().startswith("best ")]
    if not bands or any("0.0% slower" in l for l in bands) or not any("tie: " in l for l in bands):
        fail("a difference inside the noise is not called a tie:\n" + "\n".join(bands))
    j = json.loads(run([BIN, "report", out, "--json"]).stdout)
    if not any(b.get("tie") for c in j["collectives"] for b in c["bands"]):
        fail("report --json: no band marked tie")


{"header": case_header, "columns": case_columns, "ncclt": case_ncclt, "sim": case_sim,
 "history": case_history, "tie": case_tie}[CASE]()
print("ok", CASE)
