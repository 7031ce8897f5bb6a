#!/usr/bin/env python3
"""prom_live: a real 2-rank sim sweep writes its .prom file, a real node_exporter
serves it, a real Prometheus scrapes it every second; the busbw Prometheus
answers must equal run.json's, and dlcomm_profile_ok must be 1 for the good
profile and 0 for the one DLCOMM_INJECT broke.
usage: prom_live.py DLCOMM WORKDIR MPIRUN..."""
import json, os, shutil, signal, socket, subprocess, sys, time, urllib.parse, urllib.request

def need(name):
    path = shutil.which(name)
    if not path:
        print(f"SKIP: {name} not installed (apt install prometheus prometheus-node-exporter)")
        sys.exit(77)
    return path

def free_port(taken):
    for p in range(19000, 19200):
        if p in taken:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p))
                return p
            except OSError:
                pass
    sys.exit("FAIL: no free port in 19000-19199")

def query(port, q):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return json.load(r)["data"]["result"]
    except (OSError, ValueError, KeyError):
        return None

def main():
    dlcomm, work, mpirun = sys.argv[1], sys.argv[2], sys.argv[3:]
    exporter, prom = need("prometheus-node-exporter"), need("prometheus")
    shutil.rmtree(work, ignore_errors=True)
    text = os.path.join(work, "textfile")
    os.makedirs(text)
    env = dict(os.environ, DLCOMM_INJECT="error:1:ring")
    sweep = subprocess.run(mpirun + ["-x", "DLCOMM_INJECT", "-np", "2", dlcomm, "sweep", "--backend",
                                     "sim", "-p", "default,ring", "-b", "8", "-e", "1M", "--out",
                                     os.path.join(work, "run"), "--prometheus",
                                     os.path.join(text, "dlcomm.prom")],
                           env=env, capture_output=True, text=True, timeout=60)
    if sweep.returncode != 3:  # a failed profile: the run broke (README exit codes)
        sys.exit(f"FAIL: sweep exit {sweep.returncode}, expected 3\n{sweep.stderr[-2000:]}")
    with open(os.path.join(work, "run", "run.json")) as f:
        run = json.load(f)
    want = {}
    for p in run["profiles"]:
        for r in p["results"]:
            want[(p["name"], r["collective"], r["dtype"], r["op"], r["placement"],
                  str(r["bytes"]))] = r["busbw_gbps"]
    if not want:
        sys.exit("FAIL: run.json has no results")

    eport = free_port(set())
    pport = free_port({eport})
    cfg = os.path.join(work, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                f"scrape_configs:\n  - job_name: node\n    static_configs:\n"
                f"      - targets: ['127.0.0.1:{eport}']\n")
    procs = []
    def stop(*_):
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
    signal.signal(signal.SIGTERM, lambda *a: (stop(), sys.exit(1)))
    log = open(os.path.join(work, "daemons.log"), "w")
    try:
        procs.append(subprocess.Popen([exporter, "--collector.textfile.directory=" + text,
                                       f"--web.listen-address=127.0.0.1:{eport}"],
                                      stdout=log, stderr=log))
        procs.append(subprocess.Popen([prom, "--config.file=" + cfg,
                                       "--storage.tsdb.path=" + os.path.join(work, "tsdb"),
                                       f"--web.listen-address=127.0.0.1:{pport}"],
                                      stdout=log, stderr=log))
        got, ok = None, None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            got = query(pport, 'dlcomm_busbw_gbps{job="node"}')
            ok = query(pport, "dlcomm_profile_ok")
            if got and ok and len(got) >= len(want):
                break
            time.sleep(0.5)
        else:
            sys.exit(f"FAIL: Prometheus had {len(got or [])} of {len(want)} busbw series "
                     f"after 20 s; see {log.name}")
        seen = set()
        for s in got:
            m = s["metric"]
            key = (m["profile"], m["collective"], m["dtype"], m["op"], m["placement"], m["bytes"])
            if key not in want:
                sys.exit(f"FAIL: series {m} not in run.json")
            seen.add(key)
            v = float(s["value"][1])
            if abs(v - want[key]) > 1e-8 * abs(want[key]) + 1e-12:  # prom.c writes %.9g
                sys.exit(f"FAIL: {key}: Prometheus {v}, run.json {want[key]}")
        if seen != set(want):
            sys.exit(f"FAIL: run.json rows missing in Prometheus: {set(want) - seen}")
        oks = {s["metric"]["profile"]: s["value"][1] for s in ok}
        if oks != {"default": "1", "ring": "0"}:
            sys.exit(f"FAIL: dlcomm_profile_ok {oks}, expected default 1, ring 0")
        print(f"ok: {len(got)} busbw series equal run.json; profile_ok {oks}")
    finally:
        stop()

main()
