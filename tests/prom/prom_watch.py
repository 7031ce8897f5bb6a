#!/usr/bin/env python3
"""prom_watch: `dlcomm watch` as a timer runs it, three times into one results
folder, each a real preflight and sweep on 2 MPI ranks (sim backend) through the
launcher given after --, the textfile folder served by a real node_exporter and
scraped by a real Prometheus.

  1. nothing before it: exit 0, says there was nothing to compare.
  2. DLCOMM_INJECT=slow x3 on rank 1: exit 1, the regressed rows named, the
     metrics (dlcomm_watch_regressions, dlcomm_compare_regression_ratio per row)
     as watch.json says; both folders kept.
  3. healthy again, --keep 2: compared with run 1 (the last that ended 0, not the
     regressed run 2), exit 0; run 2 removed, run 1 (the baseline) and 3 kept.
Then bad usage (exit 2, one line, nothing run), a held lock (exit 2) and a
launcher that cannot start (exit 3).
usage: prom_watch.py DLCOMM WORKDIR MPIRUN..."""
import fcntl, json, os, re, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from promharness import Scraper, by_label, need  # noqa: E402

SWEEP = "--backend sim -c allreduce,allgather -b 1M -e 4M -q"
PREFLIGHT = "--quick --backend sim"


def watch(dlcomm, results, text, launcher, inject=None, extra=()):
    env = dict(os.environ)
    env.pop("DLCOMM_INJECT", None)
    if inject:
        env["DLCOMM_INJECT"] = inject
        launcher = launcher[:1] + ["-x", "DLCOMM_INJECT"] + launcher[1:]
    args = [dlcomm, "watch", "--results", results, "--textfile", text, "--sweep", SWEEP,
            "--preflight", PREFLIGHT, *extra, "--", *launcher]
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    m = re.search(r"^watch: this run: (\S+)$", p.stdout, re.M)
    return p.returncode, p.stdout, p.stderr, m.group(1) if m else None


def summary(run_dir):
    with open(os.path.join(run_dir, "watch.json")) as f:
        return json.load(f)


def expect(cond, what, out=""):
    if not cond:
        sys.exit(f"FAIL: {what}\n{out[-3000:]}")


def first_run(dlcomm, results, text, launcher):
    rc, out, err, d1 = watch(dlcomm, results, text, launcher)
    expect(rc == 0 and d1, f"first run: exit {rc}", out + err)
    expect("nothing to compare: no earlier run" in out, "first run does not say nothing was compared", out)
    for f in ("watch.json", "preflight.json", "sweep/run.json", "preflight.log", "sweep.log"):
        expect(os.path.isfile(os.path.join(d1, f)), f"first run: no {f} in {d1}")
    s = summary(d1)
    expect(s["exit_code"] == 0 and s["steps"]["compare"]["against"] is None, f"watch.json {s}")
    # One host, no baseline: every bandwidth figure SKIP, so the verdict warns (exit 0).
    expect(s["steps"]["preflight"]["verdict"]["status"] == "warn", f"preflight {s['steps']}")
    return d1


def slow_run(dlcomm, results, text, launcher, d1):
    rc, out, err, d2 = watch(dlcomm, results, text, launcher, inject="slow:1:*:3")
    expect(rc == 1 and d2, f"slow run: exit {rc}, expected 1", out + err)
    expect(re.search(r"^watch: REGRESSION: \d+ rows worse", out, re.M), "no REGRESSION line", out)
    expect(re.search(r"^\s+regression\s+default\s+allreduce", out, re.M), "allreduce not named", out)
    s = summary(d2)
    c = s["steps"]["compare"]
    expect(c["against"] == os.path.basename(d1) and c["compared"] and c["regressions"] > 0,
           f"slow run compare {c}")
    expect(os.path.isdir(d1) and os.path.isdir(d2), "a run folder was not kept")
    with open(os.path.join(d2, "compare.json")) as f:
        pairs = json.load(f)
    return d2, c["regressions"], pairs


def scraped(text, work, regressions):
    with Scraper(text, work) as prom:
        n = prom.wait_for("dlcomm_watch_regressions", lambda r: len(r) == 1)
        expect(float(n[0]["value"][1]) == regressions,
               f"dlcomm_watch_regressions {n}, watch.json {regressions}")
        code = prom.wait_for("dlcomm_watch_exit_code", lambda r: len(r) == 1)
        expect(code[0]["value"][1] == "1", f"dlcomm_watch_exit_code {code}")
        rows = prom.wait_for("dlcomm_compare_regression_ratio", lambda r: len(r) == regressions)
        worse = [float(s["value"][1]) for s in rows]
        # slow x3: each call takes three times as long, busbw is a third
        expect(all(0.6 < w < 0.72 for w in worse), f"regression ratios {worse}, expected ~0.667")
        steps = by_label(prom.wait_for("dlcomm_watch_step_exit_code", lambda r: len(r) == 2), "step")
        expect(steps == {"preflight": 0.0, "sweep": 0.0}, f"step exit codes {steps}")
        pf = prom.wait_for("dlcomm_preflight_ok", lambda r: len(r) == 1)
        expect(pf[0]["value"][1] == "1", f"dlcomm_preflight_ok {pf}")
        bw = prom.wait_for('dlcomm_busbw_gbps{collective="allreduce"}', lambda r: len(r) > 0)
    return len(rows), len(bw)


def healthy_again(dlcomm, results, text, launcher, d1, d2):
    rc, out, err, d3 = watch(dlcomm, results, text, launcher, extra=["--keep", "2"])
    expect(rc == 0 and d3, f"third run: exit {rc}", out + err)
    c = summary(d3)["steps"]["compare"]
    expect(c["against"] == os.path.basename(d1) and c["compared"] and c["regressions"] == 0,
           f"third run compared {c}, expected run 1 and no regression")
    left = sorted(os.listdir(results))
    want = sorted([os.path.basename(d1), os.path.basename(d3), ".dlcomm-watch.lock"])
    expect(left == want and f"removed {d2}" in out, f"--keep 2 left {left}", out)


def refusals(dlcomm, work, results, text, launcher):
    cases = [
        (["--sweep", "--out elsewhere"], "--out is set by watch"),
        (["--preflight", "--json=x.json"], "--json is set by watch"),
        # the steps' words are checked with their own tables before anything runs
        (["--sweep", "-c allreduce --placemnt out"], "did you mean '--placement'"),
        (["--preflight", "--pairs sometimes"], "--pairs must be auto, all, ring or none"),
        (["--textfile", os.path.join(work, "none")], "--textfile"),
        (["--keep", "-1"], "--keep"),
    ]
    for extra, want in cases:
        args = [dlcomm, "watch", "--results", results, *extra, "--", *launcher]
        if "--textfile" not in extra:
            args[4:4] = ["--textfile", text]
        before = sorted(os.listdir(results))
        p = subprocess.run(args, capture_output=True, text=True, timeout=30)
        lines = p.stderr.strip().splitlines()
        expect(p.returncode == 2 and len(lines) == 1 and want in lines[0] and not p.stdout,
               f"{extra}: exit {p.returncode}, stderr {p.stderr!r}, stdout {p.stdout[:200]!r}")
        expect(sorted(os.listdir(results)) == before, f"{extra}: a folder was made")
    with open(os.path.join(results, ".dlcomm-watch.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        p = subprocess.run([dlcomm, "watch", "--results", results], capture_output=True,
                           text=True, timeout=30)
        expect(p.returncode == 2 and "another dlcomm watch is running" in p.stderr,
               f"held lock: exit {p.returncode} {p.stderr!r}")
    p = subprocess.run([dlcomm, "watch", "--results", os.path.join(work, "r2"), "--",
                        os.path.join(work, "no-such-launcher")], capture_output=True, text=True,
                       timeout=30)
    expect(p.returncode == 3 and "cannot start" in p.stderr, f"no launcher: exit {p.returncode} {p.stderr!r}")


def main():
    dlcomm, work, mpirun = sys.argv[1], sys.argv[2], sys.argv[3:]
    need("prometheus-node-exporter"), need("prometheus")
    shutil.rmtree(work, ignore_errors=True)
    results, text = os.path.join(work, "results"), os.path.join(work, "textfile")
    os.makedirs(text)
    launcher = mpirun + ["-np", "2"]
    d1 = first_run(dlcomm, results, text, launcher)
    d2, regressions, _ = slow_run(dlcomm, results, text, launcher, d1)
    nrows, nbw = scraped(text, work, regressions)
    healthy_again(dlcomm, results, text, launcher, d1, d2)
    refusals(dlcomm, work, results, text, launcher)
    print(f"ok: run 1 nothing to compare; run 2 exit 1, {regressions} regressions, {nrows} "
          f"regressed rows and {nbw} allreduce busbw series in Prometheus; run 3 vs run 1 exit 0, "
          f"run 2 removed by --keep 2; refusals exit 2/3")


main()
