#!/usr/bin/env python3
"""What the library chose for each row (run.json "algo", "proto",
"nchannels", "choice_from", "choice_mixed"), everywhere it is shown.

usage: choice_test.py CASE DLCOMM WORKDIR DATADIR MPIRUN...

sim: a real sim sweep on several ranks (h200-sxm-8, 8 nodes, profiles
     default, ring and tree): the table's chose column, report's switches
     along the sizes (modelled), the Prometheus info series.
pair: DATADIR/base.json and new.json (make.py), an NCCL upgrade that
     changes the choice at 1 MiB and 4 MiB: report's "NCCL chose X; profile Y
     measured faster by Z%", compare's text, JSON and HTML beside each
     row and in what differs, the report page, the Prometheus series; and
     edited copies: inside the noise no claim, a model's choice labelled.
Every run.json read or made is validated against docs/schema/run.schema.json.
"""
import copy
import json
import math
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import record_schema  # noqa: E402

CASE, BIN, WORK, DATA = sys.argv[1:5]
MPIRUN = sys.argv[5:]
KEY = ("profile", "collective", "dtype", "op", "placement", "bytes", "ranks", "host", "modelled")


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(args, expect=0):
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if expect is not None and p.returncode != expect:
        fail(f"{' '.join(args)} exited {p.returncode}, expected {expect}\n"
             f"stdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}")
    return p


def valid(path):
    errors = record_schema.validate_file(path)
    if errors:
        fail("\n".join(errors))


def fresh(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def choice(r):
    """A row's choice as the outputs write it."""
    if not r.get("algo") and not r.get("proto"):
        return "-"
    s = (r.get("algo") or "?") + ("/" + r["proto"] if r.get("proto") else "")
    s += "/%d" % r["nchannels"] if r.get("nchannels") else ""
    return s + ("*" if r.get("choice_mixed") else "")


def runs_of(rows):
    """Runs of consecutive sizes with one algorithm and protocol: [(lo, hi, algo, proto)]."""
    out = []
    for r in sorted(rows, key=lambda r: r["bytes"]):
        if out and (out[-1][2], out[-1][3]) == (r["algo"], r["proto"]):
            out[-1][1] = r["bytes"]
        else:
            out.append([r["bytes"], r["bytes"], r["algo"], r["proto"]])
    return [tuple(x) for x in out]


def prom_samples(path, name):
    """{labels dict as a sorted tuple: value} of one metric."""
    out = {}
    for line in open(path):
        m = re.match(r"^" + name + r"\{(.*)\} (\S+)$", line)
        if m:
            labels = tuple(sorted(re.findall(r'(\w+)="([^"]*)"', m.group(1))))
            out[labels] = float(m.group(2))
    return out


# ---- a real sim sweep ----

def table_choices(stdout):
    """(profile, collective, [chose column of each row]) per table block."""
    blocks, cur = [], None
    for l in stdout.splitlines():
        m = re.match(r"^# (\w+)  profile (\S+)", l)
        if m:
            cur = (m.group(2), m.group(1), [])
            blocks.append(cur)
        elif cur and l and not l.startswith("#"):
            cur[2].append(l.split()[13])
    return blocks


def case_sim():
    out, work = os.path.join(fresh("sim"), "run"), os.path.join(WORK, "sim")
    prom = os.path.join(work, "sim.prom")
    p = run(MPIRUN + ["-np", "4", BIN, "sweep", "--backend", "sim", "--system", "h200-sxm-8",
                      "--sim-nodes", "8", "-p", "default,ring,tree", "-c", "allreduce,allgather",
                      "-b", "8", "-e", "2G", "-f", "16", "--budget", "0.02", "--out", out,
                      "--prometheus", prom])
    valid(os.path.join(out, "run.json"))
    doc = json.load(open(os.path.join(out, "run.json")))
    prof = {pr["name"]: pr["results"] for pr in doc["profiles"]}
    rows = [r for rs in prof.values() for r in rs]
    if any(r.get("choice_from") != "model" or not r.get("algo") or not r.get("proto")
           or "nchannels" in r for r in rows):
        fail("a sim row without the model's algorithm and protocol, or with channels it has none of")
    # The table: each block's chose column is its rows' choice, in order.
    blocks = table_choices(p.stdout)
    for name, coll, shown in blocks:
        want = [choice(r) for r in prof[name] if r["collective"] == coll]
        if shown != want:
            fail(f"table {coll} {name}: chose column {shown} is not run.json's {want}")
    if len(blocks) != 5:
        fail(f"{len(blocks)} table blocks, want 5 (no all-gather under tree)")
    # The model as NCCL: NCCL_ALGO=Ring rows are ring; Tree is all-reduce's only;
    # the default all-reduce switches from Tree (small, 64 ranks) to Ring (large).
    if {r["algo"] for r in prof["ring"]} != {"Ring"}:
        fail("profile ring: a row not modelled as Ring")
    tree = {(r["collective"], r["algo"]) for r in prof["tree"]}
    # NCCL has no Tree all-gather (2.28: "no algorithm/protocol available"):
    # the profile leaves all-gather out, saying so once, and its all-reduce runs.
    if tree != {("allreduce", "Tree")} or prof["tree"][0]["collective"] != "allreduce":
        fail(f"profile tree: {tree}, want all-reduce Tree alone (NCCL has no Tree all-gather)")
    said = [l for l in p.stderr.splitlines() if "left out" in l]
    if said != ["dlcomm: warning: allgather left out: NCCL_ALGO=Tree leaves NCCL no algorithm "
                "for it (NCCL runs allgather with Ring, CollnetDirect, NVLS, PAT)"]:
        fail(f"the tree profile's all-gather is not said to be left out, once: {said}")
    ar = [r for r in prof["default"] if r["collective"] == "allreduce" and r["placement"] == "out"]
    algos = [r["algo"] for r in sorted(ar, key=lambda r: r["bytes"])]
    if algos[0] != "Tree" or algos[-1] != "Ring":
        fail(f"default all-reduce on 64 modelled ranks: {algos}, want Tree small, Ring large")
    # report: the runs along the sizes, labelled modelled, the same in JSON.
    text = run([BIN, "report", out]).stdout
    rep = json.loads(run([BIN, "report", out, "--json"]).stdout)
    for c in rep["collectives"]:
        for cv in c["profiles"]:
            want = runs_of([r for r in prof[cv["profile"]] if r["collective"] == c["collective"]
                            and r["placement"] == c["placement"]])
            got = [(s["min_bytes"], s["max_bytes"], s["algo"], s["proto"]) for s in cv["choice"]]
            if got != want or cv["choice_from"] != "model":
                fail(f"report --json {c['collective']} {cv['profile']}: {got}, want {want}")
        if c["faster_than_chosen"]:
            fail(f"a forced profile beat the model's own choice: {c['faster_than_chosen']}")
    line = [l for l in text.splitlines() if l.startswith("  chose default ")]
    if len(line) != 2 or " -> " not in line[0] or \
            not line[0].endswith("(modelled: the sim's choice by NCCL's rules)"):
        fail(f"report: the default profile's switches are not shown as modelled: {line}")
    # Prometheus: one info series per row, algo and proto as labels, modelled.
    info = prom_samples(prom, "dlcomm_choice_info")
    if len(info) != len(rows) or any(dict(k)["from"] != "model" or dict(k)["modelled"] != "true"
                                     for k in info):
        fail(f"{len(info)} dlcomm_choice_info series for {len(rows)} rows, or not labelled modelled")
    if prom_samples(prom, "dlcomm_choice_channels"):
        fail("channels written for a model that has none")
    if any("algo" in dict(k) for k in prom_samples(prom, "dlcomm_busbw_gbps")):
        fail("busbw carries the choice: a changed choice would start a new busbw series")
    print(f"ok sim: {len(rows)} rows, {len(blocks)} tables, switches {runs_of(ar)}")


# ---- the hand-made pair ----

BEAT = ("NCCL chose Tree/Simple (profile default); profile ring (NCCL_ALGO=Ring: ran Ring/LL128) "
        "measured faster by 23.8% at sizes 1 MiB-4 MiB (2 sizes; noise up to 0.4%)")


def report_pair(base, new):
    text = run([BIN, "report", new]).stdout
    if f"  faster than chosen: {BEAT}\n" not in text:
        fail(f"report: not the line\n  {BEAT}\n{text}")
    want = ("  chose default          Tree/LL/4 at 64 KiB -> Tree/LL128/8 at 256 KiB -> "
            "Tree/Simple/8-16 at 1 MiB-4 MiB -> Ring/Simple/16-32* at 16 MiB-64 MiB  (NCCL's profiler)")
    if want not in text.splitlines():
        fail(f"report: the switches of default are not\n{want}\n{text}")
    if "faster than chosen" in run([BIN, "report", base]).stdout:
        fail("report of base: a forced profile beats a choice it did not beat")
    j = json.loads(run([BIN, "report", new, "--json"]).stdout)["collectives"][0]["faster_than_chosen"]
    pct = (math.sqrt(62 / 51 * 140 / 111) - 1) * 100
    if len(j) != 1 or (j[0]["min_bytes"], j[0]["max_bytes"], j[0]["faster_profile"]) != \
            (1 << 20, 4 << 20, "ring") or abs(j[0]["faster_pct"] - pct) > 0.01 or j[0]["text"] != BEAT:
        fail(f"report --json faster_than_chosen: {j}, want ring {pct:.2f}% faster at 1-4 MiB")
    page = os.path.join(WORK, "pair", "report.html")
    run([BIN, "report", new, "--html", page])
    html = open(page).read()
    if f'<p class="warn beat">{BEAT.replace(chr(39), "&#39;")}</p>' not in html or \
            'data-label="Tree/Simple/8-16"' not in html or '<table class="choice">' not in html:
        fail("report page: no strip of the choice, choice table or the beat")


def compare_pair(base, new):
    p = run([BIN, "compare", base, new], expect=1)
    for size, was, now in (("1 MiB", "Tree/LL128/8", "Tree/Simple/8"),
                           ("4 MiB", "Ring/LL128/16", "Tree/Simple/16")):
        row = [l for l in p.stdout.splitlines() if l.startswith("  regression  default")
               and f" {size} " in l]
        if len(row) != 1 or not row[0].endswith(f"NCCL chose {was} -> {now}"):
            fail(f"compare: the {size} row does not say the choice changed: {row}")
        if f"  choice      default allreduce {size}  {was} -> {now}" not in p.stdout:
            fail(f"compare: what differs lacks the choice at {size}:\n{p.stdout}")
    if p.stdout.count("NCCL chose") != 2:
        fail("compare: a choice change shown where there is none (64 MiB: ranks differed, "
             "the same choice)")
    out = os.path.join(WORK, "pair", "cmp.json")
    run([BIN, "compare", base, new, "--json", out], expect=1)
    c = json.load(open(out))
    changed = {(r["profile"], r["bytes"]): (r["base_choice"], r["new_choice"])
               for r in c["rows"] if r["choice_changed"]}
    if changed != {("default", 1 << 20): ("Tree/LL128/8", "Tree/Simple/8"),
                   ("default", 4 << 20): ("Ring/LL128/16", "Tree/Simple/16")}:
        fail(f"compare --json: choice_changed rows {changed}")
    kinds = [(d["kind"], d["what"], d["base"], d["new"]) for d in c["differences"]]
    if ("choice", "default allreduce 1 MiB", "Tree/LL128/8", "Tree/Simple/8") not in kinds:
        fail(f"compare --json: no choice among the differences: {kinds}")
    page = os.path.join(WORK, "pair", "cmp.html")
    run([BIN, "compare", base, new, "--html", page], expect=1)
    html = open(page).read()
    cells = re.findall(r'<td class="choice changed" data-base="([^"]*)" data-new="([^"]*)">', html)
    if sorted(cells) != [("Ring/LL128/16", "Tree/Simple/16"), ("Tree/LL128/8", "Tree/Simple/8")] \
            or "<tr class=\"warn\"><td>choice</td><td>default allreduce 4 MiB" not in html:
        fail(f"compare page: changed choice cells {cells}, or no choice in the differences")


def prom_pair(new):
    prom = os.path.join(WORK, "pair", "new.prom")
    run([BIN, "report", new, "--prometheus", prom])
    info = prom_samples(prom, "dlcomm_choice_info")
    ch = prom_samples(prom, "dlcomm_choice_channels")
    want = {"profile": "default", "bytes": "1048576", "algo": "Tree", "proto": "Simple",
            "from": "profiler", "modelled": "false"}
    hit = [k for k in info if want.items() <= dict(k).items()]
    if len(info) != 12 or len(hit) != 1 or info[hit[0]] != 1:
        fail(f"dlcomm_choice_info: {len(info)} series, the 1 MiB one {hit}")
    at = {dict(k)["bytes"]: v for k, v in ch.items() if dict(k)["profile"] == "default"}
    if at.get("1048576") != 8 or at.get("67108864") != 32:
        fail(f"dlcomm_choice_channels of default: {at}")
    if any({"algo", "proto"} & set(dict(k)) for k in prom_samples(prom, "dlcomm_busbw_gbps")):
        fail("busbw carries the choice")
    keys = {tuple(v for n, v in k if n in KEY) for k in info}
    if len(keys) != len(info):
        fail("two info series for one row")


def edited(src, name, edit):
    doc = json.load(open(src))
    edit(doc)
    path = os.path.join(WORK, "pair", name)
    json.dump(doc, open(path, "w"))
    valid(path)
    return path


def noise_and_model(new):
    # The same times with a spread of 30%: ring's 20% is inside the noise.
    def wide(doc):
        for pr in doc["profiles"]:
            for r in pr["results"]:
                r["time_us"]["ci95"] = 0.3 * r["time_us"]["mean"]
    text = run([BIN, "report", edited(new, "noisy.json", wide)]).stdout
    if "faster than chosen" in text:
        fail(f"a difference inside the noise reported as faster:\n{text}")
    # The same rows as a model's: the claim says so.
    def modelled(doc):
        for pr in doc["profiles"]:
            pr["backend"], pr["modelled"] = "sim", True
            for r in pr["results"]:
                r["choice_from"] = "model"
    text = run([BIN, "report", edited(new, "modelled.json", modelled)]).stdout
    want = BEAT.replace("NCCL chose Tree/Simple", "NCCL would choose Tree/Simple, modelled") \
               .replace("measured faster", "modelled faster")
    if want not in text or "(modelled: the sim's choice by NCCL's rules)" not in text:
        fail(f"a model's choice not labelled modelled:\n{text}")


def case_pair():
    fresh("pair")
    base, new = os.path.join(DATA, "base.json"), os.path.join(DATA, "new.json")
    valid(base)
    valid(new)
    report_pair(base, new)
    compare_pair(base, new)
    prom_pair(new)
    noise_and_model(new)
    print("ok pair: report, compare (text, JSON, HTML), the page and Prometheus say what NCCL chose")


{"sim": case_sim, "pair": case_pair}[CASE]()
