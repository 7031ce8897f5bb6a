#!/usr/bin/env python3
"""prom_live: a real 2-rank sim sweep writes its .prom file, a real node_exporter
serves it, a real Prometheus scrapes it every second; the busbw Prometheus
answers must equal run.json's, and dlcomm_profile_ok must be 1 for the good
profile and 0 for the one DLCOMM_INJECT broke.
usage: prom_live.py DLCOMM WORKDIR MPIRUN..."""
import json, os, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from promharness import Scraper, need  # noqa: E402


def main():
    dlcomm, work, mpirun = sys.argv[1], sys.argv[2], sys.argv[3:]
    need("prometheus-node-exporter"), need("prometheus")
    shutil.rmtree(work, ignore_errors=True)
    text = os.path.join(work, "textfile")
    os.makedirs(text)
    env = dict(os.environ, DLCOMM_INJECT="error:1:ring")
    sweep = subprocess.run(mpirun + ["-x", "DLCOMM_INJECT", "-np", "2", dlcomm, "sweep", "--backend",
                                     "sim", "-p", "default,ring", "-b", "8", "-e", "1M", "--out",
                                     os.path.join(work, "run"), "--prometheus",
                                     os.path.join(text, "dlcomm.prom")],
                           env=env, capture_output=True, text=True, timeout=60)
    if sweep.returncode != 3:  # a failed profile: the run broke (docs/exit-codes.md)
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

    with Scraper(text, work) as prom:
        got = prom.wait_for('dlcomm_busbw_gbps{job="node"}', lambda r: len(r) >= len(want))
        ok = prom.wait_for("dlcomm_profile_ok", lambda r: len(r) >= 2)
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

main()
