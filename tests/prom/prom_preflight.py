#!/usr/bin/env python3
"""prom_preflight: `dlcomm preflight --prometheus DIR` on real MPI ranks, its file
served by a real node_exporter and scraped by a real Prometheus; what Prometheus
answers must be the verdict of the preflight.json written beside it.

  local: 2 ranks on this host, mpi backend. Healthy: exit 0, dlcomm_preflight_ok
         1 for the host; then DLCOMM_INJECT=corrupt on rank 1 rewrites the same
         file: exit 1, ok 0, correctness FAILs counted on the host; then a hung
         rank: the watchdog ends it (exit 3) and the file says it broke (exit
         code 3, no host judged: the _ok series go stale in Prometheus).
  rig:   3 namespace hosts x 2 ranks (scripts/netns-rig.sh; root), sim backend in
         workers, one rank of the third host slow x4: exit 1, ok 0 for exactly that
         host and 1 for the other two, its bandwidth FAILs counted on it alone.
usage: prom_preflight.py local|rig DLCOMM WORKDIR MPIRUN...
Exit 77 (skip) without the packages, or (rig) without root or namespaces."""
import json, os, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from promharness import Scraper, by_label, need  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RIG = os.path.join(HERE, "..", "..", "scripts", "netns-rig.sh")


def preflight(launch, dlcomm, work, text, tag, inject=None, extra=(), timeout="50"):
    env = dict(os.environ)
    env.pop("DLCOMM_INJECT", None)
    x = []
    if inject:
        env["DLCOMM_INJECT"] = inject
        x = ["-x", "DLCOMM_INJECT"]
    js = os.path.join(work, f"pf-{tag}.json")
    p = subprocess.run(launch + x + [dlcomm, "preflight", "--quick", "--timeout", timeout, *extra,
                                     "--json", js, "--prometheus", text],
                       env=env, capture_output=True, text=True, timeout=90)
    print(p.stdout[-3000:])
    with open(js) as f:
        doc = json.load(f)
    hosts = [h["host"] for h in doc.get("scopes", {}).get("world", {}).get("host_ranks", [])]
    return p.returncode, doc, hosts, p.stderr


def check_file(text):
    path = os.path.join(text, "dlcomm-preflight.prom")
    if not os.path.isfile(path):
        sys.exit(f"FAIL: --prometheus {text} (a folder) wrote no {path}")
    left = [n for n in os.listdir(text) if n != "dlcomm-preflight.prom"]
    if left:
        sys.exit(f"FAIL: files left beside it in the textfile folder: {left}")


def wait_verdict(prom, hosts, want_ok, code):
    """Prometheus's dlcomm_preflight_ok per host once it is want_ok."""
    ok = prom.wait_for("dlcomm_preflight_ok", lambda r: by_label(r, "host") == want_ok)
    if set(by_label(ok, "host")) != set(hosts):
        sys.exit(f"FAIL: hosts {by_label(ok, 'host')} in Prometheus, {hosts} in the JSON")
    prom.wait_for("dlcomm_preflight_exit_code", lambda r: by_label(r, "job") == {"node": code})
    return prom.wait_for("dlcomm_preflight_checks_failed", lambda r: len(r) > 0)


def failed_on(series, check):
    return {s["metric"].get("host"): float(s["value"][1]) for s in series
            if s["metric"]["check"] == check}


def local(dlcomm, work, text, mpirun):
    launch = mpirun + ["-np", "2"]
    rc, doc, hosts, err = preflight(launch, dlcomm, work, text, "healthy", extra=["--backend", "mpi"])
    if rc != 0:
        sys.exit(f"FAIL: healthy preflight exit {rc}\n{err[-2000:]}")
    check_file(text)
    with Scraper(text, work) as prom:
        wait_verdict(prom, hosts, {hosts[0]: 1.0}, 0.0)
        t0 = prom.wait_for("dlcomm_preflight_timestamp_seconds", lambda r: len(r) == 1)
        rc, doc, hosts, err = preflight(launch, dlcomm, work, text, "corrupt", inject="corrupt:1",
                                        extra=["--backend", "mpi"])
        if rc != 1 or doc["verdict"]["hosts"] != hosts:
            sys.exit(f"FAIL: corrupt rank: exit {rc}, verdict {doc['verdict']}\n{err[-2000:]}")
        fails = wait_verdict(prom, hosts, {hosts[0]: 0.0}, 1.0)
        corr = failed_on(fails, "correctness")
        n_json = sum(1 for c in doc["checks"] if c["check"] == "correctness" and c["status"] == "fail")
        # every correctness FAIL (world and node) concerns the corrupt rank's host
        if corr != {hosts[0]: n_json} or n_json < 2:
            sys.exit(f"FAIL: correctness FAILs in Prometheus {corr}, {n_json} in the JSON")
        t1 = prom.wait_for("dlcomm_preflight_timestamp_seconds", lambda r: len(r) == 1)
        if not float(t1[0]["value"][1]) >= float(t0[0]["value"][1]):
            sys.exit(f"FAIL: timestamp went back: {t0} then {t1}")
        rc, doc, _, err = preflight(launch, dlcomm, work, text, "hang", inject="hang:1",
                                    extra=["--backend", "mpi"], timeout="4")
        if rc != 3 or doc["verdict"]["status"] != "broke":
            sys.exit(f"FAIL: hung rank: exit {rc}, verdict {doc['verdict']}\n{err[-2000:]}")
        prom.wait_for("dlcomm_preflight_exit_code", lambda r: by_label(r, "job") == {"node": 3.0})
        prom.wait_for("dlcomm_preflight_ok", lambda r: r == [])
    print(f"ok: host {hosts[0]} ok 1 then 0; correctness FAILs {corr}; a hung rank: exit code 3, "
          f"no host judged")


def rig(dlcomm, work, text):
    if os.geteuid() != 0:
        print("SKIP: the netns rig needs root (network namespaces, bridge, tc)")
        sys.exit(77)
    os.environ.setdefault("DLRIG_PREFIX", "ppr")
    os.environ.setdefault("DLRIG_NET", "10.213.91")
    if subprocess.run([RIG, "check"]).returncode != 0:
        print("SKIP: network namespaces are not permitted here")
        sys.exit(77)
    pre = os.environ["DLRIG_PREFIX"]
    try:
        subprocess.run([RIG, "up", "3"], check=True)
        bad = f"{pre}3"  # its second rank (2 slots per host, filled in order)
        rc, doc, hosts, err = preflight([RIG, "mpirun", "-np", "6"], dlcomm, work, text, "slow",
                                        inject="slow:5:*:4", extra=["--backend", "sim"])
    finally:
        subprocess.run([RIG, "down"])
    if rc != 1 or doc["verdict"]["hosts"] != [bad]:
        sys.exit(f"FAIL: slow rank on {bad}: exit {rc}, verdict {doc['verdict']}\n{err[-2000:]}")
    check_file(text)
    want = {h: (0.0 if h == bad else 1.0) for h in hosts}
    with Scraper(text, work) as prom:
        fails = wait_verdict(prom, hosts, want, 1.0)
    bw = failed_on(fails, "bandwidth")
    if not bw.get(bad, 0) >= 1 or any(v for h, v in bw.items() if h != bad):
        sys.exit(f"FAIL: bandwidth FAILs per host {bw}: expected on {bad} alone")
    print(f"ok: dlcomm_preflight_ok {want}; bandwidth FAILs {bw}")


def main():
    mode, dlcomm, work, mpirun = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    need("prometheus-node-exporter"), need("prometheus")
    shutil.rmtree(work, ignore_errors=True)
    text = os.path.join(work, "textfile")
    os.makedirs(text)
    if mode == "local":
        local(dlcomm, work, text, mpirun)
    else:
        rig(dlcomm, work, text)


main()
