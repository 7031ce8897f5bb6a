#!/usr/bin/env python3
"""Integration tests of the worker engine: real mpirun, real worker
processes, the sim backend. Usage:
    engine_test.py CASE DLCOMM MPIRUN [MPIRUN ARGS...]
Each case runs its sweep in a fresh folder and asserts what users rely on."""
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import record_schema  # noqa: E402  (tests/record_schema.py: docs/schema/run.schema.json)

H200 = "h200-sxm-8"
SMALL = ["-c", "allreduce", "-b", "8", "-e", "128M", "-f", "64", "--placement", "out"]


class Ctx:
    def __init__(self, case, dlcomm, mpirun):
        self.dlcomm, self.mpirun = dlcomm, mpirun
        self.dir = tempfile.mkdtemp(prefix="dlcomm-engine-%s-" % case)
        self.out = os.path.join(self.dir, "run")

    def cmd(self, np_, args, backend="sim"):
        return self.mpirun + ["-np", str(np_), self.dlcomm, "sweep", "--backend", backend,
                              "--out", self.out] + args

    def sweep(self, np_, args, env=None, expect=0, backend="sim"):
        e = dict(os.environ)
        e.update(env or {})
        cmd = self.cmd(np_, args, backend)
        if env:  # mpirun passes variables on only when told
            for k in env:
                cmd[len(self.mpirun):len(self.mpirun)] = ["-x", k]
        t0 = time.time()
        p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=240)
        self.elapsed = time.time() - t0
        if p.returncode != expect:
            fail("exit %d, expected %d\nstdout:\n%s\nstderr:\n%s"
                 % (p.returncode, expect, p.stdout[-3000:], p.stderr[-3000:]))
        return p

    def run_json(self):
        """run.json, checked against the record's schema first."""
        path = os.path.join(self.out, "run.json")
        with open(path) as f:
            doc = json.load(f)
        errors = record_schema.validate(doc, path)
        if errors:
            fail("run.json does not match docs/schema/run.schema.json:\n" + "\n".join(errors[:20]))
        return doc

    def leftovers(self):
        """Processes of this run (workers or supervisors) still alive."""
        p = subprocess.run(["pgrep", "-f", "dlcomm __worker %s " % self.out],
                           capture_output=True, text=True)
        q = subprocess.run(["pgrep", "-f", "sweep --backend sim --out %s" % self.out],
                           capture_output=True, text=True)
        return (p.stdout + q.stdout).split()


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def profiles(run):
    return {p["name"]: p for p in run["profiles"]}


def busbw_at(prof, size):
    for r in prof["results"]:
        if r["bytes"] == size:
            return r["busbw_gbps"]
    fail("profile %s has no result at %d bytes" % (prof["name"], size))


def wait_no_leftovers(c, secs=10):
    end = time.time() + secs
    while time.time() < end:
        if not c.leftovers():
            return
        time.sleep(0.2)
    fail("processes left behind: %s" % c.leftovers())


def case_profiles(c):
    """Five profiles in one launch: each runs with its own environment."""
    p = c.sweep(4, ["--system", H200, "-p", "default,p2p-off,socket,ring,tree"] + SMALL)
    run = c.run_json()
    ps = profiles(run)
    check(list(ps) == ["default", "p2p-off", "socket", "ring", "tree"], "profiles: %s" % list(ps))
    big = 128 << 20
    for name, prof in ps.items():
        check(prof["status"] == "ok", "%s: status %s" % (name, prof["status"]))
        check(prof["modelled"] is True, "%s not marked modelled" % name)
        check(len(prof["results"]) == 5, "%s: %d results" % (name, len(prof["results"])))
        for r in prof["results"]:
            check(len(r["rank_time_us"]) == 4, "%s: per-rank figures are not one per process" % name)
            check(r["wrong"] is None and r["wrong_per_rank"] is None,
                  "%s: a model checked nothing, yet says wrong %r" % (name, r["wrong"]))
            check(r["ranks"] == 8 and r["processes"] == 4, "%s: ranks %s" % (name, r["ranks"]))
    check(ps["p2p-off"]["env"] == {"NCCL_P2P_DISABLE": "1"}, "p2p-off env not recorded")
    check(ps["p2p-off"]["backend_info"]["intra_node_path"] == "shm",
          "p2p-off's worker did not see NCCL_P2P_DISABLE")
    check(busbw_at(ps["p2p-off"], big) < busbw_at(ps["default"], big) / 5,
          "p2p-off is not slower than default on an NVLink system")
    check(busbw_at(ps["tree"], big) != busbw_at(ps["ring"], big), "ring and tree agree")
    check(ps["tree"]["backend_info"]["algorithms"] == ["Tree"], "NCCL_ALGO=Tree not seen")
    check("(modelled)" in p.stdout, "the table does not say the figures are modelled")
    with open(os.path.join(c.out, "run.csv")) as f:
        rows = list(csv.DictReader(f))
    check(rows and all(r["modelled"] == "1" for r in rows), "CSV rows not marked modelled")


def case_relay(c):
    """The root worker's bootstrap id reaches every rank's worker."""
    c.sweep(3, ["-p", "default", "-c", "allreduce", "-b", "8", "-e", "8"])
    sums = {}
    for r in range(3):
        log = open(os.path.join(c.out, "workers", "default.rank%d.log" % r)).read()
        m = re.search(r"bootstrap id checksum ([0-9a-f]{8})", log)
        check(m, "rank %d's worker logged no bootstrap id" % r)
        sums[r] = m.group(1)
    check(len(set(sums.values())) == 1, "ranks saw different ids: %s" % sums)
    info = profiles(c.run_json())["default"]["backend_info"]
    check(info["bootstrap_id_checksum"] == sums[0], "run.json's id is not the root's")
    check(os.path.exists(os.path.join(c.out, "workers", "default.rank0.log")), "no worker log")


def case_hang(c):
    """A hung worker is ended at the deadline; the other profiles still run."""
    c.sweep(4, ["--timeout", "5", "-p", "default,ring,tree"] + SMALL,
            env={"DLCOMM_INJECT": "hang:2:ring"}, expect=3)
    check(c.elapsed < 5 + 5 + 10, "hang took %.1f s to handle" % c.elapsed)
    ps = profiles(c.run_json())
    ring = ps["ring"]
    check(ring["status"] == "timeout", "ring status %s" % ring["status"])
    check(ring["failed_ranks"] == [2], "failed ranks %s" % ring["failed_ranks"])
    check("rank 2" in ring["reason"], "reason does not name rank 2: %s" % ring["reason"])
    check(ps["default"]["status"] == "ok" and ps["tree"]["status"] == "ok", "others failed")
    check(len(ps["tree"]["results"]) == 5, "the profile after the hang did not run")
    check(c.run_json()["exit_code"] == 3, "exit_code not 3 in run.json")
    wait_no_leftovers(c)


def case_crash(c):
    c.sweep(4, ["--timeout", "30", "-p", "ring,default"] + SMALL,
            env={"DLCOMM_INJECT": "crash:1:ring"}, expect=3)
    ps = profiles(c.run_json())
    check(ps["ring"]["status"] == "crashed", "status %s" % ps["ring"]["status"])
    check(ps["ring"]["failed_ranks"] == [1], "failed ranks %s" % ps["ring"]["failed_ranks"])
    check("signal 11" in ps["ring"]["reason"], "reason: %s" % ps["ring"]["reason"])
    check(ps["default"]["status"] == "ok", "the next profile did not run")
    check(c.elapsed < 25, "a crash waited for the deadline (%.1f s)" % c.elapsed)
    wait_no_leftovers(c)


def case_error(c):
    c.sweep(3, ["--timeout", "30", "-p", "ring,default"] + SMALL,
            env={"DLCOMM_INJECT": "error:2:ring"}, expect=3)
    ps = profiles(c.run_json())
    check(ps["ring"]["status"] == "error" and ps["ring"]["failed_ranks"] == [2],
          "ring: %s %s" % (ps["ring"]["status"], ps["ring"].get("failed_ranks")))
    check(ps["default"]["status"] == "ok", "the next profile did not run")
    wait_no_leftovers(c)


def case_sigterm(c):
    """SIGTERM to mpirun mid-run: what finished stays, nothing is left behind."""
    env = dict(os.environ, DLCOMM_INJECT="hang:*:tree")
    cmd = c.cmd(3, ["--timeout", "120", "-p", "default,tree,ring"] + SMALL)
    cmd[len(c.mpirun):len(c.mpirun)] = ["-x", "DLCOMM_INJECT"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    path = os.path.join(c.out, "run.json")
    end = time.time() + 60
    while time.time() < end:  # until default is recorded and tree's workers hang
        if os.path.exists(path) and os.path.exists(os.path.join(c.out, "workers", "tree.rank2.log")):
            break
        time.sleep(0.2)
    time.sleep(1)
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail("mpirun did not end after SIGTERM")
    ps = profiles(c.run_json())
    check(ps["default"]["status"] == "ok" and len(ps["default"]["results"]) == 5,
          "the finished profile was lost")
    check("ring" not in ps or ps["ring"]["status"] != "ok", "the sweep went on after SIGTERM")
    wait_no_leftovers(c)


def case_slow(c):
    """slow:R:P:F means the same on every backend: rank R enters each call late
    by (F - 1) x its previous call, so the row's (slowest-rank) time grows F-fold
    and rank R's own time carries the wait; the other profile is untouched. The
    sim is deterministic, so each profile is compared with itself unfaulted."""
    args = ["-p", "default,ring", "-n", "50", "-w", "5", "--no-check"] + SMALL
    c.sweep(2, args, env={"DLCOMM_INJECT": "slow:1:ring:4"})
    base = Ctx("slowbase", c.dlcomm, c.mpirun)
    base.sweep(2, args)
    slow, ok = profiles(c.run_json()), profiles(base.run_json())
    for a, b in zip(ok["ring"]["results"], slow["ring"]["results"]):
        ratio = b["time_us"]["mean"] / a["time_us"]["mean"]
        check(3.8 < ratio < 4.2, "slow x4 on ring: time ratio %.3f at %d B" % (ratio, a["bytes"]))
        r0, r1 = b["rank_time_us"]
        check(r1 > 3.5 * r0, "rank 1 (slow) %.2f us, rank 0 %.2f us" % (r1, r0))
    for a, b in zip(ok["default"]["results"], slow["default"]["results"]):
        ratio = b["time_us"]["mean"] / a["time_us"]["mean"]
        check(0.99 < ratio < 1.01, "default (no fault) changed: ratio %.3f" % ratio)


def straggler_run(c, backend, rank, args, factor=2):
    """A 4-rank sweep with DLCOMM_INJECT=slow:RANK:*:FACTOR; returns run.json and stdout."""
    p = c.sweep(4, args, env={"DLCOMM_INJECT": "slow:%d:*:%d" % (rank, factor)}, backend=backend)
    return c.run_json(), p.stdout


def check_named(run, out, rank):
    """The slow rank, and it alone, is the sweep's straggler, with its host,
    on stdout (one line) and in run.json; the rows name it too."""
    named = run.get("stragglers")
    check(named is not None and [s["rank"] for s in named] == [rank],
          "stragglers %r, expected rank %d alone" % (named, rank))
    s = named[0]
    host = [h["name"] for h in run["fingerprint"]["hosts"] if rank in h["ranks"]]
    check(host == [s["host"]], "straggler's host %r, the fingerprint says %r" % (s["host"], host))
    check(s["late_us"] > 0 and 2 * s["rows"] >= s["of_rows"], "straggler figures: %r" % s)
    lines = [l for l in out.splitlines() if l.startswith("# stragglers:")]
    check(len(lines) == 1 and ("rank %d (%s, " % (rank, s["host"])) in lines[0],
          "stdout straggler line: %r" % lines)
    rows = [r for p in run["profiles"] for r in p["results"]]
    check(all(len(r["rank_late_us"]) == 4 for r in rows), "rank_late_us missing in a row")
    check(sum(rank in r["stragglers"] for r in rows) * 2 >= len(rows),
          "rows naming rank %d: %r" % (rank, [r["stragglers"] for r in rows]))


def case_straggler_mpi(c):
    """4 MPI ranks, rank 2 enters each call late: it is named."""
    run, out = straggler_run(c, "mpi", 2, ["-c", "allreduce", "-b", "64K", "-e", "1M",
                                          "--placement", "out", "--no-check"])
    check_named(run, out, 2)


def case_straggler_sim(c):
    """The sim in 4 workers, rank 1 enters each call late: it is named (the
    sim's own times are modelled, so its arrivals are from the real wait).
    The wait is 3x a modelled call of 45 us or more: on 2 busy cores, 8
    processes on the pipe relay make a healthy rank's median arrival up to
    40 us late, and a wait of 30 us (x2 at 1 MiB) was missed in 1 run of 5."""
    run, out = straggler_run(c, "sim", 1, ["-c", "allreduce", "-b", "4M", "-e", "32M",
                                          "--placement", "out", "--no-check"], factor=4)
    check_named(run, out, 1)


def case_inject_bounds(c):
    """An injection that cannot act is refused before anything is written."""
    for env, want in (({"DLCOMM_INJECT": "hang:5"}, "rank 5 does not exist: this run has 2"),
                      ({"DLCOMM_INJECT": "crash:1"}, "crash needs a worker backend")):
        cmd = c.mpirun + ["-np", "2", "-x", "DLCOMM_INJECT", c.dlcomm, "sweep", "--backend",
                          "mpi" if "crash" in env["DLCOMM_INJECT"] else "sim", "--out", c.out,
                          "-b", "8", "-e", "64"]
        p = subprocess.run(cmd, env=dict(os.environ, **env), capture_output=True, text=True,
                           timeout=60)
        errs = [l for l in p.stderr.splitlines() if l.startswith("dlcomm:")]
        check(p.returncode == 2, "%s: exit %d\n%s" % (env, p.returncode, p.stderr))
        check(len(errs) == 1 and want in errs[0], "%s: stderr %s" % (env, errs))
        check(not os.path.exists(c.out), "%s: a results folder was made" % env)


def write(c, name, text):
    path = os.path.join(c.dir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def case_bad_profile(c):
    bad = {
        "badjson.json": ('{"name": "x", "env": {', "not valid JSON"),
        "noname.json": ('{"env": {}}', "missing \"name\""),
        "noenv.json": ('{"name": "noenv"}', "missing \"env\""),
        "envnum.json": ('{"name": "n", "env": {"NCCL_BUFFSIZE": 4194304}}', "not a string"),
        "unknown.json": ('{"name": "u", "env": {}, "colour": "red"}', "unknown key"),
        "nvls.json": ('{"name": "v", "env": {"NCCL_NVLS_ENABLE": "1"}}', "NCCL_NVLS_ENABLE"),
    }
    for fname, (text, what) in bad.items():
        path = write(c, fname, text)
        p = c.sweep(2, ["-p", "default,%s" % path, "-b", "8", "-e", "8"], expect=2)
        lines = [l for l in p.stderr.splitlines() if l.startswith("dlcomm:")]
        check(len(lines) == 1, "%s: expected one line, got %s" % (fname, lines))
        check(path in lines[0] and what in lines[0], "%s: message %r" % (fname, lines[0]))
        check(not os.path.exists(c.out), "%s: files written for bad input" % fname)
    p = c.sweep(2, ["-p", "no-such-profile"], expect=2)
    check("no-such-profile" in p.stderr, "unknown name not named")


def case_applies_when(c):
    """A profile meant for several nodes is skipped on one, with the reason."""
    mine = write(c, "two-nodes.json", json.dumps({
        "name": "two-nodes", "description": "inter-node only", "env": {"NCCL_NET": "IB"},
        "intent": {"transport": "NET", "net": "IB"}, "applies_when": {"min_nodes": 2}}))
    c.sweep(2, ["-p", "default,%s,ib" % mine] + SMALL)
    ps = profiles(c.run_json())
    for name in ("two-nodes", "ib"):
        check(ps[name]["status"] == "skipped", "%s: %s" % (name, ps[name]["status"]))
        check("min_nodes 2" in ps[name]["reason"], "%s reason: %s" % (name, ps[name]["reason"]))
        check(not ps[name]["results"], "a skipped profile has results")
    check(ps["default"]["status"] == "ok", "default did not run")
    # The sim models the nodes it is told to: two modelled nodes apply.
    c.out += "-2"
    c.sweep(2, ["--sim-nodes", "2", "-p", "ib"] + SMALL)
    ib = profiles(c.run_json())["ib"]
    check(ib["status"] == "ok" and ib["results"][0]["ranks"] == 16, "ib on 2 modelled nodes")


def case_transports(c):
    """A profile whose channels contradict its intent is flagged, per rank."""
    liar = write(c, "liar.json", json.dumps({
        "name": "liar", "env": {"NCCL_P2P_DISABLE": "1"}, "intent": {"transport": "P2P"}}))
    p = c.sweep(2, ["-p", "p2p-off,%s" % liar, "-c", "allreduce", "-b", "8", "-e", "8"])
    ps = profiles(c.run_json())
    check(ps["p2p-off"]["observed_transports"]["transports"] == {"SHM": 1},
          "p2p-off observed %s" % ps["p2p-off"].get("observed_transports"))
    check("transport_contradictions" not in ps["p2p-off"], "p2p-off flagged")
    bad = ps["liar"].get("transport_contradictions", [])
    check([b["rank"] for b in bad] == [0, 1] and "P2P" in bad[0]["reason"], "liar: %s" % bad)
    check("profile liar, rank 1" in p.stderr, "no warning on stderr")


def case_shipped(c):
    """Every shipped profile and system loads; the systems model what they say."""
    p = subprocess.run([c.dlcomm, "profiles"], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "dlcomm profiles: exit %d %s" % (p.returncode, p.stderr))
    names = {l.split()[0] for l in p.stdout.splitlines() if l and not l[0].isspace()}
    want = {"default", "p2p-off", "shm-off", "p2p-shm-off", "socket", "ib", "gdr-off", "ring",
            "tree", "ll", "ll128", "simple"}
    check(want <= names, "dlcomm profiles lacks %s" % (want - names))
    bad = write(c, "bad.json", '{"name": "b", "env": {"X": 1}}')
    p = subprocess.run([c.dlcomm, "profiles", bad], capture_output=True, text=True, timeout=30)
    check(p.returncode == 2 and bad in p.stderr, "dlcomm profiles FILE on a bad file")
    paths = {}
    for system in ("h200-sxm-8", "a100-sxm-8", "pcie-4gpu-nop2p", "cpu-host"):
        c.out = os.path.join(c.dir, system)
        c.sweep(2, ["--system", system, "-p", "default", "-c", "allreduce", "-b", "1M", "-e", "1M"])
        prof = profiles(c.run_json())["default"]
        paths[system] = (prof["backend_info"]["intra_node_path"], prof["results"][0]["ranks"])
    check(paths == {"h200-sxm-8": ("nvlink", 8), "a100-sxm-8": ("nvlink", 8),
                    "pcie-4gpu-nop2p": ("shm", 4), "cpu-host": ("shm", 4)}, "paths %s" % paths)
    bad = write(c, "sys.json", '{"name": "s", "gpus_per_node": 8, "paths": {"nvlink": {}}}')
    p = c.sweep(2, ["--system", bad, "-p", "default"], expect=2)
    check(bad in p.stderr, "a bad system file is not named: %s" % p.stderr)


def case_rooted_agg(c):
    """gather and scatter rows from workers; -a forms a row's time over the
    processes through the relay (mean: integer sums, min: negated max)."""
    for agg in ["mean", "min", "rank0"]:
        c.sweep(4, ["--overwrite", "--system", H200, "-c", "gather,scatter", "-r", "2", "-a", agg,
                    "-b", "8", "-e", "1M", "-f", "32", "--placement", "out", "-n", "20"])
        run = c.run_json()
        check(run["options"]["aggregate"] == agg, "options.aggregate %s" % run["options"])
        rows = run["profiles"][0]["results"]
        check(sorted({r["collective"] for r in rows}) == ["gather", "scatter"] and len(rows) == 8,
              "rows %s" % [(r["collective"], r["bytes"]) for r in rows])
        for r in rows:
            rt, m = r["rank_time_us"], r["time_us"]["mean"]
            check(r["root"] == 2 and r["ranks"] == 8 and m > 0, "row %s" % r)
            tol = 1e-6 * max(rt)
            want = {"mean": sum(rt) / len(rt), "min": min(rt), "rank0": rt[0]}[agg]
            if agg == "min":
                check(m <= want + tol, "-a min: %s above the fastest rank's %s" % (m, rt))
            else:
                check(abs(m - want) <= tol, "-a %s: %s, ranks %s" % (agg, m, rt))


def case_mpi_profiles(c):
    p = subprocess.run(c.mpirun + ["-np", "2", c.dlcomm, "sweep", "--backend", "mpi", "-p", "ring",
                                   "--out", c.out], capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "-p needs a worker backend" in p.stderr,
          "mpi with -p: exit %d %s" % (p.returncode, p.stderr))
    check(not os.path.exists(c.out), "files written for bad usage")


def case_profile_end(c):
    """A profile ends when its last row ends: after DONE a worker releases only
    what peers wait on and exits, so the library's full teardown (NCCL's
    destroy waits up to 0.5 s on a proxy thread's poll) is never waited for:
    neither in run_s nor in exit_s. The rows' own seconds (setup_s + timed_s)
    account for nearly all of run_s."""
    teardown = 3.0
    c.sweep(2, ["-p", "default,ring", "--sim-teardown", str(teardown), "-c", "allreduce",
                "-b", "8", "-e", "1K", "-n", "20", "-q"])
    for name, p in profiles(c.run_json()).items():
        t = p["timing"]
        rows = sum(r["setup_s"] + r["timed_s"] for r in p["results"])
        check(len(p["results"]) == 16, "%s: %d rows" % (name, len(p["results"])))
        gap = t["run_s"] - rows
        check(0 <= gap < teardown / 2, "%s: run_s %.3f s is %.3f s past its rows' %.3f s (the "
              "teardown counted as the profile's run)" % (name, t["run_s"], gap, rows))
        check(t["exit_s"] < teardown / 2, "%s: exit_s %.3f s waited for the %.1f s teardown"
              % (name, t["exit_s"], teardown))


def case_control_pml(c):
    """MPI that carries only the supervisors' messages, on one machine, starts
    with Open MPI's ob1 (its default selection probes network adapters for
    0.2 s); the mpi backend, whose figures are MPI's, and a pml the user
    chose are left alone. run.json's environment says which was used."""
    for what, env, backend, want in (("sim", None, "sim", "ob1"),
                                      ("the user's pml", {"OMPI_MCA_pml": "^cm"}, "sim", "^cm"),
                                      ("mpi backend", None, "mpi", None)):
        if os.path.exists(c.out):
            shutil.rmtree(c.out)
        c.sweep(2, ["-c", "allreduce", "-b", "8", "-e", "8", "-n", "5", "-q"], env=env,
                backend=backend)
        got = c.run_json().get("environment", {}).get("OMPI_MCA_pml")
        check(got == want, "%s: OMPI_MCA_pml %r, expected %r" % (what, got, want))


def main():
    case, dlcomm, mpirun = sys.argv[1], sys.argv[2], sys.argv[3:]
    c = Ctx(case, dlcomm, mpirun)
    globals()["case_" + case](c)  # a failure exits, keeping the folder to look at
    shutil.rmtree(c.dir, ignore_errors=True)
    print("ok: engine %s" % case)


if __name__ == "__main__":
    main()
