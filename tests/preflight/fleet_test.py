#!/usr/bin/env python3
"""preflight --fleet: the adaptive planner on small modelled fleets.

  fleet_test.py DLCOMM CASE

Each case plants faults in a modelled fleet of 32 or 64 h200-sxm-8 nodes
with 5% noise and checks what a user relies on: the exit code, the VERDICT
line and the JSON verdict name every planted fault and nothing else (a
healthy fleet: nothing, exit 0), each named thing carries a confidence and
its figures, and the document matches docs/schema/preflight.schema.json.
inconclusive: a fault the probes cannot separate is a WARN, never a PASS.
usage: bad --fleet input is one line on stderr, exit 2, nothing written.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = sys.argv[1]
CASE = sys.argv[2]

# case: (nodes, faults, hosts, pairs, rails)
CASES = {
    "none": (64, "", [], [], []),
    "node": (64, "node:17:1.2", ["node17"], [], []),
    "link": (64, "link:40:41:1.3", [], [["node40", "node41"]], []),
    "rail": (64, "rail:5:1.25", [], [], [5]),
    "flap": (64, "flap:9:2:0.5", ["node9"], [], []),
    "three": (64, "node:3:1.2,link:20:21:1.5,rail:6:1.3", ["node3"],
              [["node20", "node21"]], [6]),
    "three-nodes": (32, "node:0:1.2,node:13:1.3,node:31:1.2",
                    ["node0", "node13", "node31"], [], []),
}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(args, json_path):
    cmd = [BIN, "preflight"] + args + ["--json", json_path]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    print("$ " + " ".join(cmd))
    print(p.stdout + p.stderr)
    return p


def check_case(name, work):
    nodes, faults, hosts, pairs, rails = CASES[name]
    out = os.path.join(work, "pf.json")
    args = ["--fleet", str(nodes), "--noise", "0.05", "--seed", "7"]
    if faults:
        args += ["--fault", faults]
    p = run(args, out)
    want = 1 if faults else 0
    if p.returncode != want:
        fail(f"exit {p.returncode}, want {want}")
    doc = json.load(open(out))
    v = doc["verdict"]
    if sorted(v["hosts"]) != sorted(hosts) or sorted(v["pairs"]) != sorted(pairs) \
            or sorted(v["rails"]) != sorted(rails):
        fail(f"verdict names hosts {v['hosts']} pairs {v['pairs']} rails {v['rails']}")
    verdict = [l for l in p.stdout.splitlines() if l.startswith("VERDICT ")]
    if len(verdict) != 1 or not verdict[0].startswith("VERDICT FAIL" if faults else "VERDICT PASS"):
        fail(f"verdict line {verdict}")
    fleet = doc["fleet"]
    if fleet["nodes"] != nodes or fleet["rounds"] < 1 or fleet["projected_s"] <= 0:
        fail("fleet summary incomplete")
    named = [f for f in fleet["findings"] if f["named"]]
    if len(named) != len(hosts) + len(pairs) + len(rails):
        fail(f"named findings {named}")
    for f in named:
        if not (0.9 < f["confidence"] <= 1 and f["slowdown"] > 1.1 and f["iterations"] > 0):
            fail(f"finding without its figures: {f}")
    if not any(l.startswith("fleet: ") and " rounds, " in l for l in p.stdout.splitlines()):
        fail("no fleet summary line")
    subprocess.run([sys.executable, os.path.join(HERE, "..", "record_schema.py"), out], check=True)


def check_inconclusive(work):
    """A fault below what the noise lets a probe separate within its
    iterations: inconclusive (WARN, exit 0), never a PASS of that node."""
    out = os.path.join(work, "pf.json")
    p = run(["--fleet", "32", "--fault", "node:5:1.06", "--target", "0.05", "--noise", "0.3",
             "--scope-size", "64K", "--seed", "2"], out)
    doc = json.load(open(out))
    v = doc["verdict"]
    if p.returncode != 0 or v["status"] != "warn" or v["hosts"] or v["pairs"] or v["rails"]:
        fail(f"exit {p.returncode}, verdict {v}")
    inc = {f["subject"] for f in doc["fleet"]["findings"] if f["inconclusive"] and not f["named"]}
    if "node5" not in inc:
        fail(f"node5 not reported inconclusive: {inc}")
    passed = [c for c in doc["checks"] if c["status"] == "pass" and "node5" in c["subject"]]
    if passed or "32 of 32 nodes cleared" in p.stdout:
        fail("a node no probe decided was passed")
    subprocess.run([sys.executable, os.path.join(HERE, "..", "record_schema.py"), out], check=True)


def check_usage(work):
    out = os.path.join(work, "bad.json")
    bad = [["--fleet", "64", "--fault", "node:99:1.2"],
           ["--fleet", "64", "--fault", "slow:1:2"],
           ["--fleet", "64", "--fault", "node:3:0.5"],
           ["--fault", "node:3:1.2"],
           ["--fleet", "1"],
           ["--fleet", "64", "--noise", "2"],
           ["--fleet", "64", "--group", "1"]]
    for args in bad:
        p = run(args, out)
        if p.returncode != 2 or len(p.stderr.strip().splitlines()) != 1 or p.stdout.strip():
            fail(f"{args}: exit {p.returncode}, want 2 and one line on stderr")
        if os.path.exists(out):
            fail(f"{args}: wrote {out}")


with tempfile.TemporaryDirectory() as work:
    if CASE == "usage":
        check_usage(work)
    elif CASE == "inconclusive":
        check_inconclusive(work)
    else:
        check_case(CASE, work)
print("PASS " + CASE)
