#!/usr/bin/env python3
"""Integration tests of dlcomm compare, plot, report and the Prometheus file.

usage: an_test.py CASE DLCOMM WORKDIR DATADIR MPIRUN...

Fixtures are made here: real sweeps through MPI (case 'fixture'), copies of
them edited on purpose, and the nccl-tests samples in DATADIR. Each case
exits 0 on success and prints what it found otherwise.
"""
import copy
import json
import os
import re
import shutil
import struct
import subprocess
import sys

CASE, BIN, WORK, DATA = sys.argv[1:5]
MPIRUN = sys.argv[5:]
RUN_A = os.path.join(WORK, "a", "run.json")
NT_JSON = os.path.join(DATA, "nccl-tests-2.19.6_all_reduce_h200x1.json")
NT_TEXT = os.path.join(DATA, "nccl-tests-2.19.6_all_reduce_h200x1.txt")
# Fixed iterations and sizes where MPI on a loaded 2-core box still gives a
# usable spread; 1 MiB is left out (its time swings several-fold between runs).
SWEEP = ["sweep", "-c", "allreduce,allgather", "-b", "1K", "-e", "256K", "-n", "300", "-w", "10", "-q"]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(args, env=None, expect=None):
    p = subprocess.run(args, capture_output=True, text=True, env=env)
    if expect is not None and p.returncode != expect:
        fail(f"{' '.join(args)} exited {p.returncode}, expected {expect}\n"
             f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def dl(*args, expect=None, env=None):
    return run([BIN] + list(args), env=env, expect=expect)


def sweep(out):
    """A fresh run in out (a retry's folder holds the last attempt's, which --out refuses)."""
    shutil.rmtree(out, ignore_errors=True)
    run(MPIRUN + ["-np", "2", BIN] + SWEEP + ["--out", out], expect=0)


def load(path):
    with open(path) as f:
        return json.load(f)


def save(doc, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f)


def slower(row, factor):
    """The row as if every call took factor times as long."""
    for k in ("mean", "p50", "p95", "p99", "min", "max"):
        row["time_us"][k] *= factor
    row["avg_us"] *= factor
    row["algbw_gbps"] /= factor
    row["busbw_gbps"] /= factor


def cmp_json(base, new, *extra, expect):
    out = os.path.join(WORK, "cmp-%d.json" % os.getpid())
    p = dl("compare", base, new, "--json", out, *extra, expect=expect)
    doc = load(out) if p.returncode in (0, 1) else None
    return p, doc


# ---- cases ----

def quiet_rows(doc, margin=0.15):
    """Rows whose combined spread (sqrt(2) x ci95) is under margin x mean:
    a 20% edit stands outside it by a margin."""
    rows = list(doc["profiles"][0]["results"])
    rows.sort(key=lambda r: r["time_us"]["ci95"] / r["time_us"]["mean"])
    return [r for r in rows if 1.42 * r["time_us"]["ci95"] < margin * r["time_us"]["mean"]]


def case_fixture():
    """Run a. On a loaded box a sweep can come out too noisy for the 20% test
    (every row's spread near 20%): then it is measured again, up to 4 times."""
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    for attempt in range(4):
        sweep(os.path.join(WORK, "a"))
        doc = load(RUN_A)
        if not doc["profiles"][0]["results"]:
            fail("the fixture sweep has no results")
        if len(quiet_rows(doc)) >= 3:
            return
        print(f"attempt {attempt}: fewer than 3 rows with a spread under 15%, measuring again")
    fail("four sweeps were all too noisy for the 20% test (is the host overloaded?)")


def case_edited():
    """A copy 20% slower at exactly three sizes: flagged there and nowhere else."""
    doc = load(RUN_A)
    rows = doc["profiles"][0]["results"]
    # The three rows whose spread leaves the clearest margin (the rule needs the
    # difference, 20% of the mean, to exceed sqrt(2) x ci95); the fixture made sure.
    picked = quiet_rows(doc)[:3]
    if len(picked) < 3:
        fail("the fixture has fewer than three quiet rows")
    for r in picked:
        slower(r, 1.2)
    edited = os.path.join(WORK, "edited", "run.json")
    save(doc, edited)
    p, res = cmp_json(RUN_A, edited, expect=1)
    flagged = sorted((r["collective"], r["placement"], r["bytes"]) for r in res["rows"]
                     if r["verdict"] == "regression")
    want = sorted((r["collective"], r["placement"], r["bytes"]) for r in picked)
    if flagged != want:
        fail(f"flagged {flagged}, expected {want}")
    others = [r for r in res["rows"] if r["verdict"] != "regression"]
    if any(r["verdict"] != "unchanged" for r in others) or len(res["rows"]) != len(rows):
        fail("rows other than the edited ones were not all unchanged")
    for r in res["rows"]:
        if r["verdict"] == "regression" and abs(r["worse_pct"] - 100 * (1 - 1 / 1.2)) > 0.01:
            fail("busbw change of an edited row is %.3f%%, expected 16.667%%" % r["worse_pct"])
    if "worst: " not in p.stdout or "KiB" not in p.stdout:
        fail("the summary does not name the worst rows with sizes:\n" + p.stdout)
    # The same edit judged by time: 20% worse.
    p, res = cmp_json(RUN_A, edited, "--metric", "time", expect=1)
    if sum(r["verdict"] == "regression" for r in res["rows"]) != 3:
        fail("--metric time does not flag exactly the three rows")
    # Above the edited sizes only: nothing left to flag; when an edited row is
    # the largest size, nothing is left to compare, which is a usage error.
    big = max(r["bytes"] for r in picked)
    if any(r["bytes"] > big for r in rows):
        dl("compare", RUN_A, edited, "--min-size", str(big + 1), expect=0)
    else:
        p = dl("compare", RUN_A, edited, "--min-size", str(big + 1), expect=2)
        if "no rows in common" not in p.stderr:
            fail("an empty comparison does not say so:\n" + p.stderr)
    # The reverse direction is an improvement, exit 0.
    p, res = cmp_json(edited, RUN_A, expect=0)
    if sum(r["verdict"] == "improvement" for r in res["rows"]) != 3:
        fail("the reverse comparison does not show three improvements")


def case_rerun():
    """A rerun of the same sweep is not a regression. A shared 2-core box
    drifts between runs by more than a run's own spread (other jobs come and
    go, and a preempted call drags a mean up by milliseconds), so: two sweeps
    back to back, judged by the median call (--stat p50) at --threshold 25,
    and up to four such pairs when load hits one of them. A false flag that
    comes back four times is a fault of the rule, not of the host."""
    for attempt in range(4):
        first = os.path.join(WORK, "rerun-first")
        second = os.path.join(WORK, "rerun-second")
        sweep(first)
        sweep(second)
        p, res = cmp_json(os.path.join(first, "run.json"), os.path.join(second, "run.json"),
                          "--threshold", "25", "--stat", "p50", expect=None)
        if p.returncode == 0:
            if len(res["rows"]) != len(load(os.path.join(first, "run.json"))["profiles"][0]["results"]):
                fail("the rerun did not pair every row")
            return
        print(f"attempt {attempt}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    fail("four back-to-back reruns of the same sweep were all flagged as regressions")


def case_identical():
    p, res = cmp_json(RUN_A, os.path.dirname(RUN_A), expect=0)  # a run folder reads its run.json
    if res["summary"]["unchanged"] != len(res["rows"]) or not res["rows"]:
        fail("a run compared with itself is not all unchanged")
    # Wrong elements in NEW fail the comparison whatever the times say.
    doc = load(RUN_A)
    doc["profiles"][0]["results"][0]["wrong"] = 3
    wrong = os.path.join(WORK, "wrong", "run.json")
    save(doc, wrong)
    p = dl("compare", RUN_A, wrong, expect=1)
    if "1 rows of NEW have wrong elements" not in p.stdout:
        fail("wrong elements are not reported:\n" + p.stdout)
    dl("compare", RUN_A, expect=2)
    dl("compare", RUN_A, RUN_A, "--metric", "speed", expect=2)
    dl("compare", RUN_A, RUN_A, "--threshold", "-1", expect=2)


def case_side_by_side():
    """scripts/side-by-side.py (the GPU benchmark's table) on the nccl-tests
    text sample and the fixture's real sweep, in rounds whose medians are
    known: nccl-tests' rounds x1, x1.1, x0.9 (median: the sample), dlcomm's
    x1, x2, x3 (median: x2); wall times of three binaries a round add up."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                          "side-by-side.py")
    raw = os.path.join(WORK, "sbs")
    shutil.rmtree(raw, ignore_errors=True)
    os.makedirs(raw)
    with open(NT_TEXT) as f:
        text = f.read()

    def scaled(line, k):
        w = line.split()
        if len(w) < 9 or line.lstrip().startswith("#") or not w[0].isdigit():
            return line
        w[5] = "%.2f" % (float(w[5]) * k)
        return " ".join(w)
    for i, k in enumerate((1.0, 1.1, 0.9)):
        with open(os.path.join(raw, "nt-all_reduce-%d.txt" % i), "w") as f:
            f.write("\n".join(scaled(l, k) for l in text.splitlines()) + "\n")
    a = load(RUN_A)
    for i, k in enumerate((1, 2, 3)):
        d = copy.deepcopy(a)
        for r in d["profiles"][0]["results"]:
            r["time_us"]["mean"] *= k
        os.makedirs(os.path.join(raw, "dl-%d" % i))
        save(d, os.path.join(raw, "dl-%d" % i, "run.json"))
    # Default-mode rounds with a worker's timing, so the wall's parts are
    # known: round i has wall 3 + i, start 0.3, run 2, exit 0.2 (total 2.5),
    # and rows whose setup and timed seconds sum to 0.4 and 1.2.
    for i in range(3):
        d = copy.deepcopy(a)
        d["profiles"][0]["timing"] = {"startup_s": 0.3, "run_s": 2.0, "exit_s": 0.2,
                                      "total_s": 2.5}
        rs = d["profiles"][0]["results"]
        for r in rs:
            r["setup_s"], r["timed_s"] = 0.4 / len(rs), 1.2 / len(rs)
        os.makedirs(os.path.join(raw, "dld-%d" % i))
        save(d, os.path.join(raw, "dld-%d" % i, "run.json"))
    with open(os.path.join(raw, "walls.txt"), "w") as f:
        for i in range(3):
            for b in ("all_reduce", "all_gather", "broadcast"):
                f.write("nccl-tests %d %.1f\n" % (i, 2.0))
            f.write("dlcomm %d %.1f\n" % (i, 1.5 + i))
            f.write("dlcomm-default %d %.1f\n" % (i, 3 + i))
    out = os.path.join(WORK, "sbs.json")
    p = run([sys.executable, script, raw, out], expect=0)
    res = load(out)
    nt = {}
    for line in text.splitlines():
        w = line.split()
        if len(w) >= 9 and w[0].isdigit():
            nt[int(w[0])] = float(w[5])
    want = {int(r["bytes"]): 2 * r["time_us"]["mean"] for r in a["profiles"][0]["results"]
            if r["collective"] == "allreduce" and r["placement"] == "out"}
    got = {r["bytes"]: r for r in res["rows"] if r["collective"] == "allreduce"}
    if not want or set(want) - set(got):
        fail("sizes of the sweep missing from the table: %s" % sorted(set(want) - set(got)))
    for size, t in want.items():
        r = got[size]
        if abs(r["dlcomm_us"] - t) > 1e-6 * t or abs(r["nccl_tests_us"] - nt[size]) > 0.006:
            fail("%d B: %r, expected dlcomm %.3f nccl-tests %.2f" % (size, r, t, nt[size]))
        if abs(r["ratio"] - t / nt[size]) > 0.01 * r["ratio"]:
            fail("%d B: ratio %r" % (size, r["ratio"]))
    if got[4 << 30]["dlcomm_us"] is not None or got[4 << 30]["nccl_tests_us"] != nt[4 << 30]:
        fail("a size only nccl-tests measured: %r" % got[4 << 30])
    if res["wall_s"] != {"nccl-tests": 6.0, "dlcomm": 2.5, "dlcomm-default": 4.0} or \
            abs(res["wall_ratio"] - 2.5 / 6) > 1e-9:
        fail("wall times: %r %r" % (res["wall_s"], res["wall_ratio"]))
    want_parts = {"wall": 4.0, "worker start": 0.3, "fill, check, warm-up": 0.4,
                  "timed batches": 1.2, "rest of the rows": 0.4, "worker exit": 0.2,
                  "outside the profile": 1.5}
    parts = res["default_wall_parts_s"]
    if set(parts) != set(want_parts) or any(abs(parts[k] - v) > 1e-9 for k, v in want_parts.items()):
        fail("the default sweep's wall in parts: %r, expected %r" % (parts, want_parts))
    if "where the default sweep's wall went" not in p.stdout:
        fail("the line of the wall's parts is missing:\n" + p.stdout)
    if "allreduce" not in p.stdout or "wall (median of rounds)" not in p.stdout:
        fail("the table or the wall line is missing:\n" + p.stdout)
    empty = os.path.join(WORK, "sbs-empty")
    os.makedirs(empty, exist_ok=True)
    p = run([sys.executable, script, empty], expect=2)
    if len(p.stderr.strip().splitlines()) != 1 or "no nccl-tests" not in p.stderr:
        fail("an empty folder: %r" % p.stderr)


def case_nccltests():
    """The samples: JSON and text agree; the format is told by content."""
    p, res = cmp_json(NT_JSON, NT_TEXT, expect=0)
    if len(res["rows"]) != 60:
        fail("expected 60 rows (30 sizes x out/in), got %d" % len(res["rows"]))
    if "compared by time" not in p.stdout or "no measured spread" not in p.stdout:
        fail("the busbw fallback and the unknown spread are not stated:\n" + p.stdout)
    swapped_j = os.path.join(WORK, "looks-like.txt")
    swapped_t = os.path.join(WORK, "looks-like.json")
    shutil.copy(NT_JSON, swapped_j)
    shutil.copy(NT_TEXT, swapped_t)
    p, res = cmp_json(swapped_j, swapped_t, expect=0)
    if len(res["rows"]) != 60:
        fail("format detection depends on the file name")
    # A 20%-slower copy of the JSON at three sizes, judged by the threshold.
    doc = load(NT_JSON)
    sizes = [1 << 20, 1 << 24, 1 << 28]
    for e in doc["results"]:
        if e["size"] in sizes:
            e["out_of_place"]["time"] *= 1.2
            e["out_of_place"]["alg_bw"] /= 1.2
    slow = os.path.join(WORK, "nt-slow.json")
    save(doc, slow)
    p, res = cmp_json(NT_JSON, slow, expect=1)
    flagged = sorted(r["bytes"] for r in res["rows"] if r["verdict"] == "regression")
    if flagged != sizes:
        fail(f"nccl-tests: flagged {flagged}, expected {sizes}")


def case_bad_input():
    bad = os.path.join(WORK, "bad")
    os.makedirs(bad, exist_ok=True)
    cases = {"empty": "", "garbage": "hello\nworld\n", "truncated.json": '{"schema": 1, "profiles": [',
             "other.json": '{"schema": 7, "profiles": []}', "binary": "\x00\x01\x02"}
    for name, text in cases.items():
        path = os.path.join(bad, name)
        with open(path, "w") as f:
            f.write(text)
        for cmd in (["compare", RUN_A, path], ["report", path]):
            p = dl(*cmd, expect=2)
            lines = [l for l in p.stderr.splitlines() if l.strip()]
            if len(lines) != 1 or name not in lines[0]:
                fail(f"bad input {name}: expected one line naming it, got {p.stderr!r}")
    dl("compare", RUN_A, os.path.join(bad, "missing"), expect=2)
    # No rows in common (2 ranks vs 1 rank): exit 2 and say so.
    p = dl("compare", RUN_A, NT_JSON, expect=2)
    if "no rows in common" not in p.stderr:
        fail("no-rows-in-common not stated: " + p.stderr)


def case_differ():
    """Runs that differ in hosts and versions are compared, with a warning."""
    doc = load(RUN_A)
    doc["fingerprint"]["hosts"][0]["name"] = "othernode"
    doc["tool_version"] = "9.9.9"
    doc["fingerprint"]["nccl"] = {"version": "2.99.1"}
    path = os.path.join(WORK, "differ", "run.json")
    save(doc, path)
    p = dl("compare", RUN_A, path, expect=0)
    m = re.search(r"warning: the runs differ: (.*)", p.stdout)
    if not m or "hosts vm" not in m.group(1) or "othernode" not in m.group(1) or "9.9.9" not in m.group(1):
        fail("the differences are not listed:\n" + p.stdout)


SIM = ["sweep", "--backend", "sim", "-c", "allreduce", "-b", "64K", "-e", "4M", "-q"]


def sim_sweep(name, env=None):
    """A 4-process sim sweep, with env set in the ranks (mpirun -x)."""
    out = os.path.join(WORK, name)
    shutil.rmtree(out, ignore_errors=True)
    xs = [a for k in (env or {}) for a in ("-x", k)]
    run(MPIRUN + xs + ["-np", "4", BIN] + SIM + ["--out", out], env=dict(os.environ, **(env or {})),
        expect=0)
    return out


def differs(base, new, kind, what, want_new):
    """compare's text, JSON and HTML each name the difference."""
    html = os.path.join(WORK, "differs-%s.html" % kind)
    p, doc = cmp_json(base, new, "--html", html, expect=None)
    m = re.search(r"^  %s\s+%s\s+(.*) -> (.*)$" % (kind, re.escape(what)), p.stdout, re.M)
    if not m or want_new not in m.group(2):
        fail(f"compare text: no {kind} line for {what} -> {want_new}:\n{p.stdout}")
    got = [d for d in doc["differences"] if d["kind"] == kind and d["what"] == what]
    if len(got) != 1 or want_new not in (got[0]["new"] or ""):
        fail(f"compare JSON: differences {doc['differences']}, want {kind} {what} -> {want_new}")
    page = open(html).read()
    sec = page[page.index('id="differences"'):]
    sec = sec[:sec.index("</table>")]
    if f"<td>{kind}</td><td>{what}</td>" not in sec or want_new not in sec:
        fail(f"compare HTML: no {kind} {what} row in the differences table:\n{sec[:2000]}")


def case_whatdiffers():
    """A sim sweep plain, again with NCCL_ALGO=Ring set, again with one rank
    slowed on purpose (DLCOMM_INJECT): compare says what changed (text,
    JSON, HTML), and report and its page show the injected straggler."""
    plain = sim_sweep("wd-plain")
    ring = sim_sweep("wd-ring", {"NCCL_ALGO": "Ring"})
    slow = sim_sweep("wd-slow", {"DLCOMM_INJECT": "slow:2:*:3"})
    differs(plain, ring, "environment", "NCCL_ALGO", "Ring")
    differs(plain, slow, "injection", "DLCOMM_INJECT", "slow:2:*:3")
    differs(plain, slow, "stragglers", "rank 2 (%s)" % load(os.path.join(slow, "run.json"))
            ["fingerprint"]["hosts"][0]["name"], "late in")
    rep = dl("report", slow, expect=0).stdout
    if "INJECTED: DLCOMM_INJECT=slow:2:*:3" not in rep or not re.search(r"stragglers: rank 2 \(", rep):
        fail("report does not show the injection and the straggler:\n" + rep)
    j = json.loads(dl("report", slow, "--json", expect=0).stdout)
    if j["injected"] != "slow:2:*:3" or [s["rank"] for s in j["stragglers"]] != [2]:
        fail(f"report --json: injected {j['injected']!r}, stragglers {j['stragglers']}")
    html = os.path.join(WORK, "wd-report.html")
    dl("report", slow, "--html", html, expect=0)
    page = open(html).read()
    if 'id="stragglers"' not in page or "rank 2 (" not in page or 'id="injected"' not in page:
        fail("report --html shows no straggler or injection")


def case_onerow():
    """A size that rounds to the bytes of the one before is one row (8 B and
    16 B of all-gather on 4 ranks are both 16 B), and compare pairs rows by
    the size asked for: a run of the old kind, holding both, pairs each row
    with its own twin, never two with one."""
    out = os.path.join(WORK, "onerow")
    shutil.rmtree(out, ignore_errors=True)
    run(MPIRUN + ["-np", "4", BIN, "sweep", "-c", "allgather", "-b", "8", "-e", "64", "-n", "20",
                  "-q", "--out", out], expect=0)
    doc = load(os.path.join(out, "run.json"))
    rows = doc["profiles"][0]["results"]
    keys = [(r["bytes"], r["placement"]) for r in rows]
    if len(keys) != len(set(keys)) or (16, "out") not in keys:
        fail(f"rows measured twice: {keys}")
    first = [r for r in rows if r["bytes"] == 16 and r["placement"] == "out"][0]
    if first["bytes_requested"] != 8 or any(r["bytes_requested"] == 16 for r in rows):
        fail(f"16 B is not the first size that asked for it: {[(r['bytes_requested'], r['bytes']) for r in rows]}")
    twin = copy.deepcopy(first)
    twin["bytes_requested"] = 16
    doc["profiles"][0]["results"].append(twin)
    old = os.path.join(WORK, "onerow-old", "run.json")
    save(doc, old)
    p, c = cmp_json(old, old, expect=0)
    s = c["summary"]
    if s["only_base"] or s["only_new"] or len(c["rows"]) != len(doc["profiles"][0]["results"]):
        fail(f"a rounded size paired wrongly: {s}, {len(c['rows'])} pairs\n{p.stdout}")


def statuses_run():
    """A copy with a timed-out, a crashed (partial), a skipped and a modelled profile."""
    doc = load(RUN_A)
    base = doc["profiles"][0]
    t = copy.deepcopy(base)
    t.update(name="p2p-off", status="timeout", reason="no progress for 60 s")
    t["results"] = t["results"][:3]
    c = copy.deepcopy(base)
    c.update(name="shm-off", status="crashed", reason="signal 11")
    c["results"] = []
    s = {"name": "ib", "backend": "nccl", "modelled": False, "status": "skipped",
         "reason": "needs more than one node", "results": []}
    m = copy.deepcopy(base)
    m.update(name="sim-dgx", backend="sim", modelled=True)
    for r in m["results"]:  # the sim's rows carry the ranks it modelled
        r["ranks"] = 64
    doc["profiles"] += [t, c, s, m]
    return doc


def case_statuses():
    doc = statuses_run()
    both = os.path.join(WORK, "statuses-base", "run.json")
    base = copy.deepcopy(doc)
    for p in base["profiles"][1:3]:
        p["status"] = "ok"
    save(base, both)
    path = os.path.join(WORK, "statuses", "run.json")
    save(doc, path)
    p = dl("compare", both, path, expect=1)
    if "p2p-off: ok -> timeout" not in p.stdout or "shm-off: ok -> crashed" not in p.stdout:
        fail("profiles that stopped finishing are not reported:\n" + p.stdout)
    p = dl("report", path, expect=0)
    for want in ("profile p2p-off: timeout", "profile shm-off: crashed", "profile ib: skipped",
                 "MODELLED", "(modelled)", "64 modelled ranks, carried by 2 processes on 1 host"):
        if want not in p.stdout:
            fail(f"report lacks {want!r}:\n{p.stdout}")
    dl("plot", path, "--out", os.path.join(WORK, "statuses-plot"), expect=0)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        fail(f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


def case_plot_png():
    out = os.path.join(WORK, "plot-png")
    shutil.rmtree(out, ignore_errors=True)
    dl("plot", RUN_A, "--out", out, expect=0)
    for coll in ("allreduce", "allgather"):
        for metric in ("busbw", "time"):
            path = os.path.join(out, f"{coll}-{metric}.png")
            w, h = png_size(path)
            if (w, h) != (1000, 600) or os.path.getsize(path) < 5000:
                fail(f"{path}: {w}x{h}, {os.path.getsize(path)} bytes")
    if any(n.startswith(".") for n in os.listdir(out)):
        fail("temporary files left behind: %s" % os.listdir(out))
    gp = open(os.path.join(out, "plot.gp")).read()
    for tic in ('"1 KiB" 1024', '"256 KiB" 262144', "logscale x 2", "2 ranks"):
        if tic not in gp:
            fail(f"plot.gp lacks {tic!r}")
    # Several runs: one line per run.
    out2 = os.path.join(WORK, "plot-runs")
    edited = os.path.join(WORK, "plot-edited", "run.json")
    doc = load(RUN_A)
    for r in doc["profiles"][0]["results"]:
        slower(r, 1.5)
    save(doc, edited)
    dl("plot", RUN_A, edited, NT_TEXT, "--out", out2, expect=0)
    gp = open(os.path.join(out2, "plot.gp")).read()
    if 'title "a"' not in gp or 'title "plot-edited"' not in gp or "nccl-tests" not in gp:
        fail("several runs are not one line each:\n" + gp)


def case_plot_svg():
    out = os.path.join(WORK, "plot-svg")
    dl("plot", RUN_A, NT_JSON, "--out", out, "--format", "svg", expect=0)
    for name in ("allreduce-busbw.svg", "allreduce-time.svg", "allgather-busbw.svg"):
        path = os.path.join(out, name)
        text = open(path).read()
        if not text.startswith("<?xml") or "<svg" not in text or not 5000 < len(text) < 2_000_000:
            fail(f"{path} is not a sensible SVG ({len(text)} bytes)")


def case_plot_nognuplot():
    empty = os.path.join(WORK, "emptypath")
    os.makedirs(empty, exist_ok=True)
    out = os.path.join(WORK, "plot-none")
    shutil.rmtree(out, ignore_errors=True)
    before = open(RUN_A, "rb").read()
    env = dict(os.environ, PATH=empty)
    p = dl("plot", RUN_A, "--out", out, expect=2, env=env)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if len(lines) != 1 or "gnuplot" not in lines[0]:
        fail("expected one line about gnuplot, got %r" % p.stderr)
    if os.path.exists(out):
        fail("plot without gnuplot created %s" % out)
    if open(RUN_A, "rb").read() != before:
        fail("the input changed")


def case_report():
    p = dl("report", RUN_A, expect=0)
    for want in (r"HOROVOD_FUSION_THRESHOLD=\d+", r"HOROVOD_CYCLE_TIME=\d+\.\d",
                 r"HOROVOD_HIERARCHICAL_ALLREDUCE: not judged", r"50% at", r"floor",
                 r"best < 64 KiB"):
        if not re.search(want, p.stdout):
            fail(f"report lacks {want!r}:\n{p.stdout}")
    doc = json.loads(dl("report", RUN_A, "--json", expect=0).stdout)
    names = [a["name"] for a in doc["advice"]]
    if "HOROVOD_FUSION_THRESHOLD" not in names or len(doc["collectives"]) != 2:
        fail("report --json lacks the advice or a collective")
    # The sample: 90% of the 2152 GB/s peak (1937) is first reached at 128 MiB.
    p = dl("report", NT_TEXT, expect=0)
    if "HOROVOD_FUSION_THRESHOLD=134217728" not in p.stdout:
        fail("nccl-tests sample: wrong fusion threshold:\n" + p.stdout)


def case_report_advice():
    """Crossovers from ring/tree profiles; hierarchical all-reduce on 2 nodes."""
    doc = load(RUN_A)
    base = doc["profiles"][0]
    ring, tree = copy.deepcopy(base), copy.deepcopy(base)
    ring.update(name="ring", env={"NCCL_ALGO": "Ring"})
    tree.update(name="tree", env={"NCCL_ALGO": "Tree"})
    for r in tree["results"]:
        slower(r, 0.5 if r["bytes"] < 16384 else 2.0)  # tree wins small, ring large
    doc["profiles"] = [ring, tree]
    path = os.path.join(WORK, "algos", "run.json")
    save(doc, path)
    p = dl("report", path, expect=0)
    m = re.search(r"allreduce NCCL_ALGO crossover: (.*)", p.stdout)
    if not m or not re.search(r"Tree best from 1 KiB .*Ring best from 16 KiB", m.group(1)):
        fail("no tree/ring crossover at 16 KiB:\n" + p.stdout)
    two = load(RUN_A)
    two["fingerprint"]["hosts"].append(dict(two["fingerprint"]["hosts"][0], name="node2"))
    two["fingerprint"]["nodes"] = 2
    for r in two["profiles"][0]["results"]:
        slower(r, 4.0)
    path2 = os.path.join(WORK, "twonodes", "run.json")
    save(two, path2)
    p = dl("report", path2, expect=0)
    if "HOROVOD_HIERARCHICAL_ALLREDUCE: cannot be judged" not in p.stdout:
        fail("multi-node without a baseline must say it cannot judge:\n" + p.stdout)
    p = dl("report", path2, "--baseline", RUN_A, expect=0)
    if not re.search(r"HOROVOD_HIERARCHICAL_ALLREDUCE=1\n.*is 25% of the intra-node", p.stdout):
        fail("4x slower across nodes must advise hierarchical all-reduce:\n" + p.stdout)


LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\} '
                  r'(-?[0-9.eE+-]+|NaN|[+-]Inf)$')


def check_prom(path, rows_expected):
    seen, types = {}, set()
    for line in open(path).read().splitlines():
        if line.startswith("# TYPE "):
            types.add(line.split()[2])
            continue
        if line.startswith("# HELP ") or not line:
            continue
        m = LINE.match(line)
        if not m:
            fail(f"{path}: not a Prometheus sample: {line!r}")
        if m.group(1) not in types:
            fail(f"{path}: {m.group(1)} has no # TYPE line before it")
        seen[m.group(1)] = seen.get(m.group(1), 0) + 1
    for name in ("dlcomm_busbw_gbps", "dlcomm_time_us", "dlcomm_wrong_elements", "dlcomm_run_info"):
        if name not in seen:
            fail(f"{path}: no {name}")
    if seen["dlcomm_time_us"] != rows_expected:
        fail(f"{path}: {seen['dlcomm_time_us']} time samples for {rows_expected} rows")
    return seen


def case_prometheus():
    doc = load(RUN_A)
    doc["profiles"][0]["name"] = 'we"ird\\name'
    path = os.path.join(WORK, "prom", "run.json")
    save(doc, path)
    prom = os.path.join(WORK, "prom", "dlcomm.prom")
    dl("report", path, "--prometheus", prom, expect=0)
    check_prom(prom, len(doc["profiles"][0]["results"]))
    if 'profile="we\\"ird\\\\name"' not in open(prom).read():
        fail("label values are not escaped")
    if any(n.startswith(".") for n in os.listdir(os.path.dirname(prom))):
        fail("temporary file left behind")


def case_sweep_plot():
    out = os.path.join(WORK, "sweep-plot")
    shutil.rmtree(out, ignore_errors=True)
    prom = os.path.join(out, "dlcomm.prom")  # in the run folder the sweep creates
    run(MPIRUN + ["-np", "2", BIN, "sweep", "-c", "allreduce", "-b", "1K", "-e", "64K", "-n", "20",
                  "-q", "--out", out, "--plot", "--prometheus", prom], expect=0)
    png_size(os.path.join(out, "allreduce-busbw.png"))
    png_size(os.path.join(out, "allreduce-time.png"))
    check_prom(prom, len(load(os.path.join(out, "run.json"))["profiles"][0]["results"]))
    opts = load(os.path.join(out, "run.json"))["options"]
    if opts.get("plot") is not True or opts.get("prometheus") != prom:
        fail("run.json does not echo --plot and --prometheus: %r" % opts)
    # --plot without gnuplot: refused before anything is measured or written.
    # The check runs before MPI starts, so one process without mpirun shows it
    # (mpirun started by its full path puts its own folder, /usr/bin, first
    # on the ranks' PATH, and gnuplot lives there too).
    empty = os.path.join(WORK, "emptypath")
    os.makedirs(empty, exist_ok=True)
    none = os.path.join(WORK, "sweep-noplot")
    shutil.rmtree(none, ignore_errors=True)
    p = run([BIN, "sweep", "-c", "allreduce", "-b", "1K", "-e", "4K", "-n", "5", "-q", "--out", none,
             "--plot"], env=dict(os.environ, PATH=empty))
    if p.returncode != 2 or "gnuplot is not on PATH" not in p.stderr or os.path.exists(none):
        fail(f"sweep --plot without gnuplot: exit {p.returncode}, {p.stderr!r}")
    p = run(MPIRUN + ["-np", "2", BIN, "sweep", "-c", "allreduce", "-q", "--out", none,
                      "--prometheus", os.path.join(WORK, "no-such-dir", "x.prom")])
    if p.returncode != 2 or os.path.exists(none):
        fail(f"sweep --prometheus into a missing folder: exit {p.returncode}, {p.stderr!r}")


if __name__ == "__main__":
    fn = globals().get("case_" + CASE)
    if not fn:
        fail("unknown case " + CASE)
    fn()
    print("ok", CASE)
