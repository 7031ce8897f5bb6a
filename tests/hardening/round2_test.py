#!/usr/bin/env python3
"""Hardening, second round (issue 25), by class: the real dlcomm, real mpirun.

  round2_test.py --bin DLCOMM [--mpirun "mpirun ..."] GROUP...

GROUP:
  links       links and permissions, planted by an unprivileged user (nobody,
              through setpriv) against a root run: nothing is written through
              them, the run is refused with exit 2 naming the folder (root
              only: skipped, saying why, elsewhere)
  unattended  concurrency without --out: runs started in the same second each
              get a folder; compare and history on a run still being written,
              one killed, one with wrong data; history's order of nccl-tests
              JSON (local time) beside a file dated by its mtime
  launch      dlcomm launch where dlcomm never ran (false, hostname, Open MPI
              unable to start), too few open files, and a nested launch
              signalled: exit 3 with a line, nothing left running or behind
  silent      what was silently wrong: report past 64 profiles, an unreadable
              profile in $DLCOMM_PROFILES, a profile skipped by design in the
              Prometheus file

Shares its helpers (run, check, one_line, ...) with hardening_test.py.
"""
import argparse
import glob
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hardening_test as H  # noqa: E402
from hardening_test import check, fresh, one_line, run, tmp, write  # noqa: E402

NOBODY = 65534
SWEEP = ["sweep", "-c", "allreduce", "-b", "8", "-e", "8", "-n", "1", "-w", "0", "-q"]


def is_root():
    return os.geteuid() == 0


def as_nobody(*cmd, env=None):
    """cmd run as the unprivileged user (setpriv: no shell between)."""
    e = dict(os.environ, **(env or {}))
    p = subprocess.run(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"] +
                       list(cmd), env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def mpirun(n):
    return shlex.split(H.A.mpirun) + ["-np", str(n)]


# ---------------------------------------------------------------- links --

def shared_folder():
    """A sticky world-writable folder (as /tmp is), and a root file to protect."""
    os.chmod(H.TMP, 0o711)
    base = tmp("shared")
    os.makedirs(base, exist_ok=True)
    os.chmod(base, 0o1777)
    target = write(tmp("precious"), "precious\n")
    os.chmod(target, 0o644)
    rootdir = tmp("rootdir")
    os.makedirs(rootdir, exist_ok=True)
    return base, target, rootdir


def intact(target, rootdir):
    return open(target).read() == "precious\n" and os.listdir(rootdir) == []


def plant(*cmds):
    """Each cmd (a list) run as nobody; all must succeed."""
    for c in cmds:
        rc, _, err = as_nobody(*c)
        assert rc == 0, "planting %s failed: %s" % (c, err)


def refused(name, rc, err, want, target, rootdir):
    check(name, rc == 2 and one_line(err) and want in err and "refused" in err and intact(target, rootdir),
          "rc=%s target intact=%s %r" % (rc, intact(target, rootdir), err[-300:]))


def links_preflight(base, target, rootdir):
    # the case: FILE.workers/workers/default.rank0.log, a link to a root file
    w = os.path.join(base, "pfx.json.workers")
    plant(["mkdir", "-p", w + "/workers"], ["ln", "-s", target, w + "/workers/default.rank0.log"])
    rc, _, err = run(["preflight", "--quick", "--backend", "sim", "--json", os.path.join(base, "pfx.json")],
                     mpi=2, timeout=120)
    refused("links_preflight_workers_log_link", rc, err, "pfx.json.workers", target, rootdir)
    # FILE.workers itself a link to a root folder
    plant(["ln", "-s", rootdir, os.path.join(base, "pf2.json.workers")])
    rc, _, err = run(["preflight", "--quick", "--backend", "sim", "--json", os.path.join(base, "pf2.json")],
                     mpi=2, timeout=120)
    refused("links_preflight_workers_folder_link", rc, err, "pf2.json.workers", target, rootdir)
    # FILE.workers a plain file of nobody's
    plant(["touch", os.path.join(base, "pf3.json.workers")])
    rc, _, err = run(["preflight", "--quick", "--backend", "sim", "--json", os.path.join(base, "pf3.json")],
                     mpi=2, timeout=120)
    refused("links_preflight_workers_not_folder", rc, err, "pf3.json.workers", target, rootdir)


def links_sweep(base, target, rootdir):
    # --out a folder of nobody's holding workers/ with planted logs
    out = os.path.join(base, "out1")
    plant(["mkdir", "-p", out + "/workers"],
          ["ln", "-s", target, out + "/workers/default.rank0.log"],
          ["ln", "-s", target, out + "/workers/default.rank0.nccl.log"])
    rc, _, err = run(SWEEP + ["--backend", "sim", "--out", out], mpi=2)
    refused("links_sweep_workers_planted", rc, err, "out1/workers", target, rootdir)
    check("links_sweep_workers_planted_no_run", not os.path.exists(out + "/run.json"), "run.json written")
    # workers a link to a root folder
    out = os.path.join(base, "out2")
    plant(["mkdir", out], ["ln", "-s", rootdir, out + "/workers"])
    rc, _, err = run(SWEEP + ["--backend", "sim", "--out", out], mpi=2)
    refused("links_sweep_workers_folder_link", rc, err, "out2/workers", target, rootdir)
    # workers root's own but writable by anyone
    out = fresh("out3")
    os.makedirs(out + "/workers")
    os.chmod(out + "/workers", 0o777)
    rc, _, err = run(SWEEP + ["--backend", "sim", "--out", out])
    check("links_sweep_workers_world_writable", rc == 2 and "writable by other users" in err,
          "rc=%s %r" % (rc, err[-300:]))
    # .dlcomm.lock a second name of a root file (a hard link; planted here by root,
    # as fs.protected_hardlinks keeps nobody from it): never truncated
    out = os.path.join(base, "out4")
    plant(["mkdir", out])
    os.link(target, out + "/.dlcomm.lock")
    rc, _, err = run(SWEEP + ["--backend", "mpi", "--out", out])
    check("links_sweep_lock_hard_link", rc == 2 and one_line(err) and intact(target, rootdir),
          "rc=%s intact=%s %r" % (rc, intact(target, rootdir), err[-300:]))


def links_allowed(base, target, rootdir):
    """What must still work: an empty folder of another user's, the run's own rerun."""
    out = os.path.join(base, "out5")
    plant(["mkdir", out])
    rc, _, err = run(SWEEP + ["--backend", "sim", "-p", "default,ring", "--out", out], mpi=2)
    logs = sorted(glob.glob(out + "/workers/*.log"))
    ok = rc == 0 and len(logs) == 8 and all(os.lstat(p).st_uid == 0 and not os.path.islink(p) for p in logs)
    check("links_sweep_into_users_empty_folder", ok and os.stat(out + "/workers").st_uid == 0,
          "rc=%s logs=%s %r" % (rc, logs, err[-300:]))
    rc, _, err = run(SWEEP + ["--backend", "sim", "-p", "default,ring", "--out", out, "--overwrite"], mpi=2)
    check("links_sweep_rerun_own_workers", rc == 0 and intact(target, rootdir), "rc=%s %r" % (rc, err[-300:]))
    pj = os.path.join(base, "own.json")
    for i in range(2):
        rc, _, err = run(["preflight", "--quick", "--backend", "sim", "--json", pj], mpi=2, timeout=120)
        check("links_preflight_rerun_own_workers_%d" % i, rc == 0, "rc=%s %r" % (rc, err[-300:]))


def g_links():
    if not is_root():
        print("skip links: planting as another user (setpriv) and running as root needs root")
        return
    if not shutil.which("setpriv"):
        print("skip links: no setpriv (util-linux)")
        return
    base, target, rootdir = shared_folder()
    links_preflight(base, target, rootdir)
    links_sweep(base, target, rootdir)
    links_allowed(base, target, rootdir)


# ----------------------------------------------------------- unattended --

def unattended_default_folder():
    cwd = fresh("noout")
    os.makedirs(cwd)
    cmd = [H.A.bin] + SWEEP + ["--backend", "mpi"]
    ps = [subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(4)]
    rcs = [p.wait(timeout=120) for p in ps]
    errs = [p.stderr.read().decode(errors="replace") for p in ps]
    dirs = sorted(os.listdir(os.path.join(cwd, "results")))
    whole = [json.load(open(os.path.join(cwd, "results", d, "run.json")))["exit_code"] == 0 for d in dirs]
    check("unattended_four_sweeps_same_second", rcs == [0] * 4 and len(dirs) == 4 and all(whole),
          "rcs=%s dirs=%s %r" % (rcs, dirs, [e[-200:] for e in errs if e]))
    for i in range(3):
        rc, _, err = run(SWEEP + ["--backend", "mpi"], cwd=cwd)
        check("unattended_sweep_loop_%d" % i, rc == 0, "rc=%s %r" % (rc, err[-200:]))
    check("unattended_sweep_loop_folders", len(os.listdir(os.path.join(cwd, "results"))) == 7,
          str(os.listdir(os.path.join(cwd, "results"))))
    tune = [H.A.bin, "tune", "--model", "resnet50", "--framework", "ddp", "--backend", "mpi", "-q"]
    ps = [subprocess.Popen(tune, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(2)]
    rcs = [p.wait(timeout=180) for p in ps]
    check("unattended_two_tunes_same_second", rcs == [0, 0],
          "rcs=%s %r" % (rcs, [p.stderr.read().decode()[-200:] for p in ps]))
    pf = [H.A.bin, "preflight", "--quick", "--backend", "sim"]
    ps = [subprocess.Popen(pf, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(3)]
    rcs = [p.wait(timeout=180) for p in ps]
    check("unattended_three_preflights_same_second", rcs == [0, 0, 0],
          "rcs=%s %r" % (rcs, [p.stderr.read().decode()[-200:] for p in ps]))


def long_sweep(out):
    """A sweep that runs for seconds; returns once its run.json is there."""
    p = subprocess.Popen([H.A.bin, "sweep", "--backend", "mpi", "-c", "allreduce,broadcast,allgather,reduce",
                          "-b", "8", "-e", "64M", "-q", "--out", out],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):
        if os.path.exists(os.path.join(out, "run.json")):
            break
        time.sleep(0.05)
    return p


def unattended_compare():
    base = fresh("cmp-base")
    rc, _, err = run(SWEEP + ["--backend", "mpi", "-c", "allreduce,broadcast", "--out", base])
    assert rc == 0, err
    live = fresh("cmp-live")
    p = long_sweep(live)
    running = json.load(open(os.path.join(live, "run.json")))
    rc, out, err = run(["compare", base, live])
    rc_h, out_h, _ = run(["history", base, live])
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)
    check("unattended_compare_new_still_running",
          running.get("exit_code") is None and rc == 2 and one_line(err) and "still running" in err and
          "no longer finish" not in out + err, "rc=%s %r %r" % (rc, out[-300:], err[-300:]))
    check("unattended_history_last_still_running", rc_h == 0 and "still running" in out_h and
          "regression" not in out_h.split("still running")[-1], "rc=%s %r" % (rc_h, out_h[-400:]))
    # killed without a word: it did not finish, and no run holds the folder any more
    dead = fresh("cmp-dead")
    p = long_sweep(dead)
    p.kill()
    p.wait(timeout=30)
    rc, out, err = run(["compare", base, dead])
    check("unattended_compare_killed_run", rc == 1 and "no longer finish" in out and "killed" in out,
          "rc=%s %r %r" % (rc, out[-300:], err[-200:]))


def unattended_corrupt():
    good = fresh("cor-good")
    rc, _, err = run(SWEEP + ["--backend", "mpi", "--out", good], mpi=2)
    assert rc == 0, err
    bad = fresh("cor-bad")
    rc, _, err = run(SWEEP + ["--backend", "mpi", "--out", bad], mpi=2, env={"DLCOMM_INJECT": "corrupt:1"})
    assert rc == 1, err
    rc, out, err = run(["compare", good, bad])
    check("unattended_compare_corrupt_finished_wrong", rc == 1 and "finished with wrong data" in out and
          "no longer finish" not in out, "rc=%s %r" % (rc, out[-400:]))


def unattended_history_local_time():
    """nccl-tests JSON start_time is the host's local time: on a UTC+5:30 host a
    3-hour-old slower JSON run must sort before a text run dated now."""
    src = os.path.join(H.A.src, "tests", "analysis", "data", "nccl-tests-2.19.6_all_reduce_h200x1")
    d = fresh("hist-tz")
    os.makedirs(d)
    shutil.copy(src + ".txt", os.path.join(d, "now.txt"))
    doc = json.load(open(src + ".json"))
    env = dict(os.environ, TZ="Asia/Kolkata")
    then = subprocess.run(["date", "-d", "3 hours ago", "+%Y-%m-%d %H:%M:%S"], env=env,
                          capture_output=True, text=True).stdout.strip()
    doc["start_time"] = then
    for r in doc["results"]:
        for side in ("out_of_place", "in_place"):
            r[side]["time"] *= 2
            r[side]["alg_bw"] /= 2
            r[side]["bus_bw"] /= 2
    write(os.path.join(d, "old.json"), json.dumps(doc))
    rc, out, err = run(["history", d], env={"TZ": "Asia/Kolkata"})
    v = [l for l in out.splitlines() if "verdict" in l]
    check("unattended_history_ncclt_json_local_time", rc == 0 and v and "no regression" in v[0],
          "rc=%s %r %r" % (rc, v, err[-200:]))


def g_unattended():
    unattended_default_folder()
    unattended_compare()
    unattended_corrupt()
    unattended_history_local_time()


# --------------------------------------------------------------- launch --

def launch_never_ran():
    rc, out, err = run(["launch", "false"])
    check("launch_false", rc == 3 and "never ran" in err, "rc=%s %r" % (rc, err[-300:]))
    rc, out, err = run(["launch"] + mpirun(2) + ["hostname"])
    check("launch_hostname", rc == 3 and "never ran" in err, "rc=%s %r" % (rc, err[-300:]))
    if is_root() and shutil.which("setpriv"):
        # Open MPI cannot start: its session folder in a TMPDIR that cannot be written
        ro = tmp("ro-tmpdir")
        os.makedirs(ro, exist_ok=True)
        os.chmod(ro, 0o555)
        os.chmod(H.TMP, 0o711)
        rc, out, err = as_nobody(H.A.bin, "launch", "mpirun", "-np", "2", H.A.bin, *SWEEP, "--backend", "mpi",
                                 "--out", tmp("ro-out"), env={"TMPDIR": ro})
        check("launch_openmpi_cannot_start", rc == 3 and "never ran" in err, "rc=%s %r" % (rc, err[-300:]))
    else:
        print("skip launch_openmpi_cannot_start: needs root to run as another user")
    rc, out, err = run(["launch"] + mpirun(2) + [H.A.bin] + SWEEP + ["--backend", "mpi", "--out", fresh("lg")])
    check("launch_good_run_still_0", rc == 0, "rc=%s %r" % (rc, err[-300:]))


def under_ulimit(n, cmd):
    """cmd under ulimit -n n (soft and hard): (exit code, stderr); a hang is 'timeout'."""
    try:
        p = subprocess.run(["sh", "-c", 'ulimit -n %d && exec "$@"' % n, "sh"] + cmd,
                           capture_output=True, text=True, timeout=60)
        return p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def launch_ulimit():
    for n in (8, 16, 24):
        args = SWEEP + ["--backend", "mpi", "--out", fresh("ul%d" % n)]
        rc, err = under_ulimit(n, [H.A.bin] + args)
        check("ulimit_%d_sweep" % n, rc == 3 and "open files" in err, "rc=%s %r" % (rc, err[-300:]))
        rc, err = under_ulimit(n, [H.A.bin, "launch"] + mpirun(2) + [H.A.bin] + args)
        check("ulimit_%d_launch" % n, rc == 3 and "open files" in err, "rc=%s %r" % (rc, err[-300:]))


def launch_nested_sigterm():
    """dlcomm launch dlcomm launch mpirun ...: SIGTERM to the outer one."""
    td = fresh("launch-tmp")
    os.makedirs(td)
    out = fresh("nested")
    cmd = [H.A.bin, "launch", H.A.bin, "launch"] + mpirun(2) + [
        H.A.bin, "sweep", "--backend", "mpi", "-c", "allreduce,broadcast,allgather,reduce", "-b", "8", "-e",
        "64M", "-q", "--out", out]
    p = subprocess.Popen(cmd, env=dict(os.environ, TMPDIR=td), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(600):
        if os.path.exists(os.path.join(out, "run.json")):
            break
        time.sleep(0.05)
    time.sleep(0.3)
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=60)
    left = subprocess.run(["pgrep", "-f", "--", "--out " + out], capture_output=True, text=True).stdout.split()
    doc = json.load(open(os.path.join(out, "run.json")))
    check("launch_nested_sigterm_exit3_nothing_left",
          rc == 3 and not left and doc.get("exit_code") == 3 and doc.get("interrupted_by") == "SIGTERM",
          "rc=%s left=%s exit_code=%s by=%s" % (rc, left, doc.get("exit_code"), doc.get("interrupted_by")))
    check("launch_nested_sigterm_tmp_cleaned", os.listdir(td) == [], str(os.listdir(td)))
    for pid in left:  # a failed case must not leave the run behind for the next one
        try:
            os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass


def g_launch():
    launch_never_ran()
    launch_ulimit()
    launch_nested_sigterm()


# --------------------------------------------------------------- silent --

def silent_report_70_profiles():
    d = fresh("p70")
    rc, _, err = run(SWEEP + ["--backend", "sim", "-b", "1K", "-e", "1M", "-n", "2", "--out", d])
    assert rc == 0, err
    doc = json.load(open(os.path.join(d, "run.json")))
    one = doc["profiles"][0]
    profs = []
    for i in range(70):
        p = json.loads(json.dumps(one))
        p["name"] = "p%02d" % i
        if i == 69:  # the last one 10x faster: the best, whatever the order
            for r in p["results"]:
                r["time_us"] = {k: v / 10 for k, v in r["time_us"].items()}
                r["avg_us"] /= 10
                r["algbw_gbps"] *= 10
                r["busbw_gbps"] *= 10
                r["rank_time_us"] = [x / 10 for x in r["rank_time_us"]]
        profs.append(p)
    doc["profiles"] = profs
    f = write(tmp("p70.json"), json.dumps(doc))
    rc, out, err = run(["report", f])
    best = [l for l in out.splitlines() if l.strip().startswith("best <")]
    check("silent_report_70_profiles_best", rc == 0 and best and best[0].split()[4] == "p69",
          "rc=%s %r %r" % (rc, best, err[-200:]))


def silent_profiles_unreadable():
    pd = fresh("pdir")
    os.makedirs(pd)
    os.chmod(H.TMP, 0o711)
    os.symlink("/nonexistent/tree.json", os.path.join(pd, "tree.json"))
    rc, _, err = run(SWEEP + ["--backend", "sim", "-p", "tree", "--out", fresh("pu1")],
                     env={"DLCOMM_PROFILES": pd})
    check("silent_profile_dangling_link_refused", rc == 2 and one_line(err) and "tree.json" in err,
          "rc=%s %r" % (rc, err[-300:]))
    if not (is_root() and shutil.which("setpriv")):
        print("skip silent_profile_unreadable_as_user: needs root to run as another user")
        return
    src = os.path.join(H.A.src, "topologies", "profiles", "ring.json")
    shutil.copy(src, os.path.join(pd, "ring.json"))
    os.chmod(os.path.join(pd, "ring.json"), 0)
    os.chmod(pd, 0o755)
    out = tmp("shared-pu2")
    os.makedirs(out, exist_ok=True)
    os.chmod(out, 0o1777)
    rc, _, err = as_nobody(H.A.bin, *SWEEP, "--backend", "sim", "-p", "ring", "--out", out + "/r",
                           env={"DLCOMM_PROFILES": pd})
    check("silent_profile_unreadable_as_user", rc == 2 and one_line(err) and "ring.json" in err,
          "rc=%s %r" % (rc, err[-300:]))


def silent_prom_skipped():
    d = fresh("prom-skip")
    prom = tmp("skip.prom")
    rc, _, err = run(SWEEP + ["--backend", "sim", "-p", "default,ib", "--out", d, "--prometheus", prom])
    text = open(prom).read() if rc == 0 else ""
    check("silent_prom_skipped_not_failed", rc == 0 and
          'dlcomm_profile_ok{profile="ib",status="skipped"} 1' in text and
          'dlcomm_profile_ok{profile="default",status="ok"} 1' in text, "rc=%s %r" % (rc, err[-200:]))


def g_silent():
    silent_report_70_profiles()
    silent_profiles_unreadable()
    silent_prom_skipped()


GROUPS = {"links": g_links, "unattended": g_unattended, "launch": g_launch, "silent": g_silent}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mpirun", default="mpirun --oversubscribe")
    ap.add_argument("--src", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("groups", nargs="+", choices=sorted(GROUPS))
    H.A = ap.parse_args()
    H.A.bin = os.path.abspath(H.A.bin)
    with tempfile.TemporaryDirectory(prefix="dlcomm-hard2-") as t:
        H.TMP = t
        os.chdir(t)
        for g in H.A.groups:
            GROUPS[g]()
    print("%d failed" % len(H.FAILS))
    for f in H.FAILS:
        print("  " + f)
    return 1 if H.FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
