#!/usr/bin/env python3
"""Loads dlcomm's HTML pages in headless Chromium and checks what a reader relies on.

usage: browser_test.py DLCOMM WORKDIR DATADIR SHOTDIR MPIRUN...

Makes the pages itself: a real mpirun sweep (mpi backend, 2 ranks) and a sim
multi-profile sweep with --html, report/compare/history --html over them and
over the nccl-tests files in DATADIR; a real 2-rank MPI tune and a sim tune of
two profiles, whose answer report --tune puts in the page (its figures checked
against the tune record and the text and JSON reports), and a tune record's
own page. Each page is opened from a file:// URL
in Chromium driven over the DevTools protocol (a websocket): the network is
emulated offline and every request the page makes is recorded
(Network.requestWillBeSent), as is every console message, log entry and
uncaught exception. A page passes when its only request is its own file,
nothing was logged at error level, and the DOM has the charts (an <svg> with
a <title>, axis labels with units, points with their figures), a <table>
behind every chart and the page's own sections. One PNG of each kind of page
goes to SHOTDIR. Exit 77 when chromium or python3-websocket is absent.
"""
import base64
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

BIN, WORK, DATA, SHOTS = sys.argv[1:5]
MPIRUN = sys.argv[5:]

try:
    import websocket  # python3-websocket
except ImportError:
    sys.path.append("/usr/lib/python3/dist-packages")  # Debian's, under another interpreter
try:
    import websocket
except ImportError:
    print("SKIP: python3-websocket is not installed (apt-get install python3-websocket)")
    sys.exit(77)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if not CHROMIUM:
    print("SKIP: chromium is not installed (apt-get install chromium)")
    sys.exit(77)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(args, expect=0):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != expect:
        fail(f"{' '.join(args)} exited {p.returncode}, expected {expect}\n{p.stdout}\n{p.stderr}")
    return p


class Browser:
    def __init__(self):
        self.prof = tempfile.mkdtemp(prefix="dlcomm-chromium-")
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--disable-background-networking", "--disable-sync",
             "--disable-component-update", "--no-default-browser-check",
             "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
             "--remote-debugging-port=0", "--user-data-dir=" + self.prof,
             "--window-size=1000,1400", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.prof, "DevToolsActivePort")
        for _ in range(300):
            if os.path.exists(port_file) and len(open(port_file).read().split()) >= 2:
                break
            time.sleep(0.05)
        else:
            fail("chromium did not start its DevTools endpoint")
        port = open(port_file).read().split()[0]
        import urllib.request
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
        page = [t for t in targets if t["type"] == "page"][0]
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30)
        self.id = 0
        self.events = []
        for m in ("Network.enable", "Runtime.enable", "Log.enable", "Page.enable"):
            self.call(m)
        self.call("Network.emulateNetworkConditions", offline=True, latency=0,
                  downloadThroughput=0, uploadThroughput=0)

    def call(self, method, **params):
        self.id += 1
        self.ws.send(json.dumps({"id": self.id, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == self.id:
                if "error" in m:
                    fail(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, name, timeout=20):
        end = time.time() + timeout
        while time.time() < end:
            if any(e.get("method") == name for e in self.events):
                return
            self.events.append(json.loads(self.ws.recv()))
        fail(f"no {name} within {timeout} s")

    def load(self, path):
        self.events = []
        url = "file://" + os.path.abspath(path)
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")
        time.sleep(0.2)  # late requests or console lines would arrive now
        self.call("Runtime.evaluate", expression="1")
        return url

    def js(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        if "exceptionDetails" in r:
            fail(f"{expr}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def shot(self, out):
        self.call("Emulation.setDeviceMetricsOverride", width=1000, height=1400,
                  deviceScaleFactor=1, mobile=False)
        png = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        with open(out, "wb") as f:
            f.write(png)

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            self.proc.wait(10)
            shutil.rmtree(self.prof, ignore_errors=True)


DOM = """(() => {
 const figs = [...document.querySelectorAll('figure.chart')];
 return {
  title: document.title,
  charts: figs.map(f => ({
    id: f.id,
    svgTitle: (f.querySelector('svg > title') || {}).textContent || '',
    xlabel: (f.querySelector('svg .xlabel') || {}).textContent || '',
    ylabel: (f.querySelector('svg .ylabel') || {}).textContent || '',
    points: f.querySelectorAll('svg g.pt').length,
    pointTitles: [...f.querySelectorAll('svg g.pt > title')].map(t => t.textContent).slice(0, 3),
    marked: f.querySelectorAll('svg g.pt.marked').length,
    lines: f.querySelectorAll('svg g.series').length,
    dashes: [...f.querySelectorAll('svg path.line')].map(p => p.getAttribute('stroke-dasharray')),
    tableRows: f.querySelectorAll('table.chartdata tbody tr').length,
    width: f.querySelector('svg').getBoundingClientRect().width })),
  tables: [...document.querySelectorAll('table')].map(t => t.className),
  verdict: (document.querySelector('#verdict, p.verdict') || {}).textContent || '',
  text: document.body.innerText.slice(0, 20000) };
})()"""


def check_page(br, path, kind, want_tables, shot=None, want_marked=False):
    url = br.load(path)
    reqs = [e["params"]["request"]["url"] for e in br.events if e.get("method") == "Network.requestWillBeSent"]
    others = [u for u in reqs if u != url]
    if others:
        fail(f"{path}: requests left the file: {others}")
    errs = [e for e in br.events if e.get("method") in ("Runtime.exceptionThrown",)
            or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] in ("error", "warning"))
            or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "warning", "assert"))]
    if errs:
        fail(f"{path}: console errors: {json.dumps(errs)[:2000]}")
    d = br.js(DOM)
    if not d["charts"]:
        fail(f"{path}: no charts")
    for c in d["charts"]:
        if c["points"] < 1 or not c["svgTitle"] or c["tableRows"] < 1:
            fail(f"{path}: chart {c['id']} lacks points, title or table: {c}")
        if "(" not in c["ylabel"] or not c["xlabel"]:
            fail(f"{path}: chart {c['id']} axis labels without units: {c['xlabel']!r} {c['ylabel']!r}")
        if len(set(c["dashes"])) != len(c["dashes"]):
            fail(f"{path}: chart {c['id']}: two lines share a dash pattern {c['dashes']}")
        if not all(("GB/s" in t or " us" in t or " ms" in t) for t in c["pointTitles"]):
            fail(f"{path}: point titles lack figures: {c['pointTitles']}")
        if c["width"] < 300:
            fail(f"{path}: chart {c['id']} is not drawn at a readable size: {c['width']}")
    for t in want_tables:
        if t not in d["tables"]:
            fail(f"{path}: no table.{t} (have {d['tables']})")
    if want_marked and not any(c["marked"] for c in d["charts"]):
        fail(f"{path}: no regressed size marked")
    if shot:
        br.shot(shot)
    print(f"ok {kind} {path}: {len(d['charts'])} charts, "
          f"{sum(c['points'] for c in d['charts'])} points, {len(reqs)} request (the file), no console error")
    return d


STRIPS_DOM = """(() => [...document.querySelectorAll('figure.chart')].map(f => {
  const plot = f.querySelector('svg g.axes rect').getBoundingClientRect();
  const svg = f.querySelector('svg').getBoundingClientRect();
  return {id: f.id, label: (f.querySelector('g.strips > text') || {}).textContent || '',
   strips: [...f.querySelectorAll('g.strip')].map(g => ({name: g.dataset.name,
    segs: [...g.querySelectorAll('g.seg')].map(s => {
      const r = s.querySelector('rect').getBoundingClientRect();
      return {lo: +s.dataset.lo, hi: +s.dataset.hi, label: s.dataset.label,
              title: s.querySelector('title').textContent,
              below: r.top >= plot.bottom, inside: r.left >= svg.left - 1 && r.right <= svg.right + 1
                     && r.bottom <= svg.bottom + 1 && r.width > 0}; })}))}; }))()"""


def check_strips(br, path, rep_json, modelled):
    """The choice under each bandwidth chart: a strip per profile whose rows
    say, a box per run of sizes (report --json's), drawn below the plot and
    inside the chart; none under the time charts."""
    br.load(path)
    charts = br.js(STRIPS_DOM)
    want = {}
    for c in rep_json["collectives"]:
        for cv in c["profiles"]:
            want[(c["collective"], cv["profile"])] = [
                (s["min_bytes"], s["max_bytes"], s["algo"] + "/" + s["proto"]) for s in cv.get("choice", [])]
    seen = 0
    for i, c in enumerate(rep_json["collectives"]):
        by_id = {x["id"]: x for x in charts}
        bw, tm = by_id.get(f"c{i}-bw"), by_id.get(f"c{i}-time")
        if not bw or not tm or tm["strips"]:
            fail(f"{path}: {c['collective']}: no bandwidth chart, or strips under the time chart")
        names = [cv["profile"] for cv in c["profiles"] if cv.get("choice")]
        if [s["name"] for s in bw["strips"]] != names:
            fail(f"{path}: {c['collective']}: strips {[s['name'] for s in bw['strips']]}, want {names}")
        for st in bw["strips"]:
            got = [(g["lo"], g["hi"], re.sub(r"/\d.*$", "", g["label"])) for g in st["segs"]]
            if got != want[(c["collective"], st["name"])]:
                fail(f"{path}: strip {st['name']}: {got}, want {want[(c['collective'], st['name'])]}")
            for g in st["segs"]:
                if not g["below"] or not g["inside"] or (modelled and "modelled" not in g["title"]):
                    fail(f"{path}: strip box {g} not drawn under the plot inside the chart, or a "
                         "model's not labelled")
                seen += 1
        if names and ("modelled" in bw["label"]) != modelled:
            fail(f"{path}: strip label {bw['label']!r}")
    print(f"ok choice strips {path}: {seen} boxes")
    return seen


TUNE_DOM = """(() => {
 const s = document.querySelector('section#tune');
 if (!s) return null;
 const v = s.querySelector('#tune-verdict');
 return {
  line: (s.querySelector('#tune-comparison') || {}).textContent,
  verdict: v && v.dataset.verdict, verdictText: v && v.textContent,
  cmp: Object.fromEntries([...s.querySelectorAll('table.tunecmp tbody tr')].map(tr => [tr.id,
        [+tr.querySelector('td[data-bytes]').dataset.bytes,
         tr.querySelector('td[data-us]') ? +tr.querySelector('td[data-us]').dataset.us : null]])),
  agrees: (s.querySelector('#tune-agrees') || {}).textContent,
  settings: [...s.querySelectorAll('div.setting')].map(d => ({exposed: +d.dataset.exposedUs,
        paste: d.querySelector('pre.paste').textContent})),
  charts: Object.fromEntries([...s.querySelectorAll('figure.chart')].map(f => [f.id,
        [...f.querySelectorAll('g.series')].map(g => ({name: g.dataset.name,
          pts: [...g.querySelectorAll('g.pt')].map(p => ({x: +p.dataset.x, y: +p.dataset.y,
                marked: p.classList.contains('marked')}))}))])),
  ticks: [...s.querySelectorAll('#tune-exposed svg g.axes text')].map(t => t.textContent),
  rows: s.querySelectorAll('table.tunecands tbody tr').length,
  cells: [...s.querySelectorAll('table.tunecands tbody tr')].map(tr =>
        [...tr.querySelectorAll('td[data-us]')].map(td => +td.dataset.us)) };
})()"""


def cand_label(c):
    """The candidate's name on the chart's axis, as dlcomm writes it (C's %g)."""
    if "bucket_cap_mb" in c:
        return "%g MiB" % c["bucket_cap_mb"]
    return "%g MiB/%g ms" % (c["fusion_threshold_bytes"] / 1048576, c["cycle_time_ms"])


def check_tune(br, path, rec, line, jtune=None):
    """The page's tune section against the tune record (rec), the text
    report's comparison sentence (line) and the JSON report's figures."""
    t = br.js(TUNE_DOM)
    if not t:
        fail(f"{path}: no tune section")
    if t["line"] != line:
        fail(f"{path}: the comparison is not the text report's:\n page {t['line']!r}\n text {line!r}")
    r = rec["recommendation"]
    if t["verdict"] != r["verdict"] or \
            ("a clear winner" if r["verdict"] == "winner" else "any of these") not in t["verdictText"]:
        fail(f"{path}: verdict {t['verdict']!r} {t['verdictText']!r}, the record says {r['verdict']!r}")
    want = [(s["exposed_us"], "".join(l + "\n" for l in s["paste"])) for s in r["settings"]]
    if [(s["exposed"], s["paste"]) for s in t["settings"]] != want:
        fail(f"{path}: settings and paste lines {t['settings']}, the record has {want}")
    cands = [c for c in rec["candidates"] if c.get("measured", True)]
    profs = list(dict.fromkeys(c["profile"] for c in rec["candidates"]))
    labels = list(dict.fromkeys(cand_label(c) for c in rec["candidates"]))
    best = {(s["profile"], s["exposed_us"]) for s in r["settings"]}
    if t["rows"] != len(rec["candidates"]) or t["ticks"][:len(labels)] != labels:
        fail(f"{path}: {t['rows']} candidate rows, axis {t['ticks']}; the record: {labels}")
    keys = ["step_us", "step_ci95_us", "comm_us", "exposed_us", "curve_step_us"]
    want = [[c[k] for k in keys if k in c] for c in rec["candidates"]]
    if t["cells"] != want:
        fail(f"{path}: the candidates' table {t['cells']}, the record's {want}")
    for chart, key in (("tune-exposed", "exposed_us"), ("tune-comm", "comm_us")):
        series = t["charts"].get(chart)
        if not series or [s["name"] for s in series] != profs:
            fail(f"{path}: {chart}: lines {series and [s['name'] for s in series]}, want {profs}")
        got = {(s["name"], p["x"]): (p["y"], p["marked"]) for s in series for p in s["pts"]}
        want = {(c["profile"], labels.index(cand_label(c))):
                (c[key] / 1e3, (c["profile"], c["exposed_us"]) in best) for c in cands}
        if got.keys() != want.keys() or any(abs(got[k][0] - want[k][0]) > 1e-9 * want[k][0]
                                            or got[k][1] != want[k][1] for k in want):
            fail(f"{path}: {chart} points {got}, the record's {want}")
    if jtune is None:
        if not t["line"].startswith("not compared") or t["cmp"]:
            fail(f"{path}: a comparison without a sweep: {t['line']!r}")
        return t
    # The figures behind the sentence: the JSON report's, and the record's.
    fb = lambda c: c["bucket_cap_mb"] * 1048576 if "bucket_cap_mb" in c else c["fusion_threshold_bytes"]
    cmp = t["cmp"]
    if cmp.get("tune-curve", [None])[0] != jtune["curve_fusion_bytes"] or \
            cmp.get("tune-best") != [jtune["best_bytes"], jtune["best_exposed_us"]] or \
            cmp.get("tune-nearest") != [jtune["nearest_bytes"], jtune["nearest_exposed_us"]]:
        fail(f"{path}: comparison table {cmp}, the JSON report's {jtune}")
    if jtune["best_exposed_us"] != r["settings"][0]["exposed_us"]:
        fail(f"{path}: tune's best {jtune['best_exposed_us']} is not the record's {r['settings'][0]}")
    thr = math.log2(jtune["curve_fusion_bytes"] + 1)
    near = min(abs(math.log2(fb(c) + 1) - thr) for c in cands)
    at = [c["exposed_us"] for c in cands if abs(math.log2(fb(c) + 1) - thr) == near]
    if jtune["nearest_exposed_us"] != min(at):
        fail(f"{path}: the candidate nearest {jtune['curve_fusion_bytes']} B is not the record's {at}")
    agrees = any(fb(c) == jtune["nearest_bytes"] and (c["profile"], c["exposed_us"]) in best
                 for c in cands)
    if agrees != jtune["agrees"] or ("agrees" if agrees else "not what") not in t["agrees"]:
        fail(f"{path}: agreement {t['agrees']!r}, want {agrees}")
    return t


def text_line(out):
    """The comparison sentence of a text report."""
    lines = out.splitlines()
    i = lines.index("== tune's measured answer beside the curve ==")
    return lines[i + 1].strip()


def json_docs(out):
    dec, i, docs = json.JSONDecoder(), 0, []
    while i < len(out.rstrip()):
        d, i = dec.raw_decode(out, i)
        docs.append(d)
        while i < len(out) and out[i].isspace():
            i += 1
    return docs


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    os.makedirs(SHOTS, exist_ok=True)
    W = lambda *p: os.path.join(WORK, *p)
    nt_json = glob.glob(os.path.join(DATA, "*.json"))[0]
    nt_text = glob.glob(os.path.join(DATA, "*.txt"))[0]
    # Real runs: MPI with 2 ranks (report), and the sim with four profiles (not tree:
    # NCCL has no Tree all-gather, so that profile leaves it out and charts would differ).
    run(MPIRUN + ["-np", "2", BIN, "sweep", "-c", "allreduce,allgather", "-b", "1K", "-e", "256K",
                  "-n", "50", "-w", "2", "-q", "--out", W("mpi"), "--html", W("sweep-mpi.html")])
    run(MPIRUN + ["-np", "2", BIN, "sweep", "--backend", "sim", "-p", "default,p2p-off,ring,ll",
                  "-c", "allreduce,allgather", "-b", "8", "-e", "64M", "-q", "--out", W("sim"),
                  "--html", W("sweep-sim.html")])
    # A second sim run, slower on purpose (jitter-free edit of the times), for compare.
    doc = json.load(open(W("sim", "run.json")))
    for p in doc["profiles"]:
        for r in p["results"]:
            if r["bytes"] >= 1 << 20:
                for k in r["time_us"]:
                    r["time_us"][k] *= 1.3
                r["busbw_gbps"] /= 1.3
                r["algbw_gbps"] /= 1.3
    doc["started"] = "2099-01-01T00:00:00Z"
    os.makedirs(W("sim-slow"))
    json.dump(doc, open(W("sim-slow", "run.json"), "w"))
    # The same sim sweep with NCCL_ALGO set and one rank slowed on purpose
    # (4 processes: two cannot say which one is off): compare's page must say
    # both and the new straggler, the report page the straggler.
    env = dict(os.environ, NCCL_ALGO="Ring", DLCOMM_INJECT="slow:1:*:3")
    p = subprocess.run(MPIRUN[:1] + ["-x", "NCCL_ALGO", "-x", "DLCOMM_INJECT"] + MPIRUN[1:] +
                       ["-np", "4", BIN, "sweep", "--backend", "sim", "-p", "default,p2p-off,ring,ll",
                        "-c", "allreduce,allgather", "-b", "8", "-e", "64M", "-q", "--out", W("sim-inj")],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        fail(f"the injected sim sweep exited {p.returncode}\n{p.stderr}")
    run([BIN, "compare", W("sim"), W("sim-inj"), "--html", W("compare-inj.html")], expect=1)
    run([BIN, "report", W("sim-inj"), "--html", W("report-inj.html")])
    run([BIN, "report", W("sim"), "--html", W("report-sim.html")])
    run([BIN, "report", nt_json, "--html", W("report-ncclt.html")])
    run([BIN, "report", nt_text, "--html", W("report-nccltext.html")])
    run([BIN, "compare", W("sim"), W("sim-slow"), "--html", W("compare-sim.html")], expect=1)
    run([BIN, "compare", nt_json, nt_text, "--html", W("compare-ncclt.html")])
    # What NCCL chose: a hand-made upgrade pair (tests/analysis/data/choice).
    pair = [os.path.join(DATA, "choice", n) for n in ("base.json", "new.json")]
    run([BIN, "report", pair[1], "--html", W("report-choice.html")])
    run([BIN, "compare", pair[0], pair[1], "--html", W("compare-choice.html")], expect=1)
    sim_json = json.loads(run([BIN, "report", W("sim"), "--json"]).stdout)
    pair_json = json.loads(run([BIN, "report", pair[1], "--json"]).stdout)
    mpi_json = json.loads(run([BIN, "report", W("mpi"), "--json"]).stdout)
    os.makedirs(W("hist"))
    for n in ("mpi", "sim", "sim-slow"):
        shutil.copytree(W(n), W("hist", n))
    shutil.copy(nt_json, W("hist"))
    run([BIN, "history", W("hist"), "--html", W("history.html")])
    # tune: a real 2-rank MPI tune of eight 160 KB gradients (DDP), and a sim
    # tune of two profiles (Horovod); report puts the answer in the page.
    eight = {"model": "eight", "tensors": [{"name": "w%d" % i, "shape": [200, 200]} for i in range(8)]}
    json.dump(eight, open(W("eight.json"), "w"))
    eight["model"] = "<script>alert(2)</script>"  # the record's name reaches the page as text
    json.dump(eight, open(W("evil-model.json"), "w"))
    tc = ["--model", W("eight.json"), "--backward-ms", "0.2", "--budget", "0.2", "--timeout", "30", "-q"]
    run(MPIRUN + ["-np", "2", BIN, "tune"] + tc + ["--backend", "mpi", "--bucket-caps", "0.05,0.4,1",
                  "--first-bucket-mb", "0.05", "--json", W("tune-ddp.json"), "--out", W("tune-ddp"),
                  "--html", W("tune-own.html"), "--curve", W("mpi", "run.json")])
    run(MPIRUN + ["-np", "2", BIN, "tune"] + tc[2:] + ["--model", W("evil-model.json"), "--backend", "sim",
                  "-p", "ring,tree", "--framework",
                  "horovod", "--fusion-thresholds", "0,0.1,1", "--cycle-times", "0.05,1",
                  "--json", W("tune-hvd.json"), "--out", W("tune-hvd")])
    rep_tune = run([BIN, "report", W("mpi"), "--tune", W("tune-ddp.json"), "--html", W("report-tune.html")])
    rep_json = json_docs(run([BIN, "report", W("mpi"), "--tune", W("tune-ddp.json"), "--json"]).stdout)
    hvd_text = run([BIN, "report", W("tune-hvd.json"), "--html", W("tune-hvd.html")]).stdout
    run_text = run([BIN, "report", W("tune-ddp"), "--html", W("report-tunerun.html")]).stdout
    # The H200's: a sweep of profiles and tune of ResNet-50 (nccl, results/reference).
    h200 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "results", "reference",
                        "h200-wave2")
    h200_rec = os.path.join(h200, "tune", "tune-resnet50-ddp.json")
    h200_rep = run([BIN, "report", os.path.join(h200, "sweep-profiles"), "--tune", h200_rec,
                    "--html", W("report-h200-tune.html")])
    h200_json = json_docs(run([BIN, "report", os.path.join(h200, "sweep-profiles"), "--tune", h200_rec,
                               "--json"]).stdout)
    # A string from a run file reaches the page escaped, never as markup.
    doc["profiles"][0]["reason"] = "<script>alert(1)</script>"
    doc["profiles"][0]["status"] = "timeout"
    os.makedirs(W("evil"))
    json.dump(doc, open(W("evil", "run.json"), "w"))
    run([BIN, "report", W("evil"), "--html", W("report-evil.html")])

    br = Browser()
    try:
        rep = ["run", "profiles", "peaks", "bands", "advice", "chartdata"]
        check_page(br, W("sweep-mpi.html"), "report", rep)
        d = check_page(br, W("sweep-sim.html"), "report", rep, os.path.join(SHOTS, "report.png"))
        if len(d["charts"]) != 4 or any(c["lines"] != 4 for c in d["charts"]):
            fail(f"sim report: want 4 charts of 4 profiles: {[(c['id'], c['lines']) for c in d['charts']]}")
        if "line rate" not in d["text"]:
            fail("sim report: no line rate of the modelled system")
        check_page(br, W("report-sim.html"), "report", rep)
        if not check_strips(br, W("sweep-sim.html"), sim_json, True):
            fail("the sim's page shows no choice")
        if check_strips(br, W("sweep-mpi.html"), mpi_json, False):
            fail("the mpi page shows a choice mpi never made")
        d = check_page(br, W("report-choice.html"), "report", rep + ["choice"])
        check_strips(br, W("report-choice.html"), pair_json, False)
        beat = pair_json["collectives"][0]["faster_than_chosen"][0]["text"]
        if beat not in d["text"]:
            fail(f"report page: not {beat!r}")
        check_page(br, W("compare-choice.html"), "compare", ["differences", "pairs"])
        cells = br.js("[...document.querySelectorAll('table.pairs td.choice.changed')].map(c => c.innerText)")
        if sorted(cells) != ["Ring/LL128/16 \u2192 Tree/Simple/16", "Tree/LL128/8 \u2192 Tree/Simple/8"]:
            fail(f"compare page: the changed choices shown are {cells}")
        check_page(br, W("report-ncclt.html"), "report", rep)
        check_page(br, W("report-nccltext.html"), "report", rep)
        d = check_page(br, W("compare-sim.html"), "compare", ["fingerprint", "pairs", "chartdata"],
                       os.path.join(SHOTS, "compare.png"), want_marked=True)
        if not d["verdict"].startswith("Verdict: regression"):
            fail(f"compare: verdict not first or not a regression: {d['verdict']!r}")
        check_page(br, W("compare-inj.html"), "compare", ["differences", "fingerprint", "pairs"])
        diff = br.js("[...document.querySelectorAll('table.differences tbody tr')].map("
                     "tr => [...tr.cells].map(c => c.innerText))")
        want = {("environment", "NCCL_ALGO", "(unset)", "Ring"),
                ("injection", "DLCOMM_INJECT", "(unset)", "slow:1:*:3")}
        if not want <= {tuple(r) for r in diff} or not any(r[0] == "stragglers" and r[1].startswith("rank 1 (")
                                                           and r[3].startswith("late in") for r in diff):
            fail(f"compare page: the differences table {diff} lacks the environment, the injection "
                 "or the new straggler")
        print(f"ok compare page: {len(diff)} differences shown")
        d = check_page(br, W("report-inj.html"), "report", rep)
        strag = br.js("(document.getElementById('stragglers') || {}).innerText || ''")
        if "rank 1 (" not in strag or "late in" not in strag or "DLCOMM_INJECT=slow:1:*:3" not in d["text"]:
            fail(f"report page: straggler {strag!r} or the injection not shown")
        d = check_page(br, W("compare-ncclt.html"), "compare", ["fingerprint", "pairs"])
        if "no regression" not in d["verdict"]:
            fail(f"compare of nccl-tests JSON and text: {d['verdict']!r}")
        d = check_page(br, W("history.html"), "history", ["runs", "chartdata"], os.path.join(SHOTS, "history.png"))
        if "regression" not in d["text"]:
            fail("history: the slow run's verdict is not shown")
        rec = json.load(open(W("tune-ddp.json")))
        if rep_json[1]["tune_comparison"] != text_line(rep_tune.stdout):
            fail(f"report --tune: JSON and text differ: {rep_json[1]} {rep_tune.stdout}")
        check_page(br, W("report-tune.html"), "report --tune", rep + ["tunecmp", "tunecands"])
        t = check_tune(br, W("report-tune.html"), rec, text_line(rep_tune.stdout), rep_json[1]["tune"])
        br.js("document.getElementById('tune').scrollIntoView(); 1")
        br.shot(os.path.join(SHOTS, "tune.png"))
        print(f"ok report --tune: {t['line']}")
        check_page(br, W("report-h200-tune.html"), "report --tune (H200)", rep + ["tunecmp", "tunecands"])
        t = check_tune(br, W("report-h200-tune.html"), json.load(open(h200_rec)), text_line(h200_rep.stdout),
                       h200_json[1]["tune"])
        print(f"ok report --tune (H200): {t['line']}")
        hvd = json.load(open(W("tune-hvd.json")))
        check_page(br, W("tune-hvd.html"), "tune record", ["run", "tunecands", "chartdata"])
        t = check_tune(br, W("tune-hvd.html"), hvd, text_line(hvd_text))
        if "<script>alert(2)</script>" not in br.js("document.title") or br.js("document.scripts.length") != 0:
            fail("a tune record's model name became markup")
        print(f"ok tune page: {len(hvd['candidates'])} candidates, 2 profiles, {t['verdict']}")
        run_rec = json.load(open(W("tune-ddp", "run.json")))["tune"]
        check_page(br, W("report-tunerun.html"), "tune run", rep + ["tunecands"])
        check_tune(br, W("report-tunerun.html"), run_rec, text_line(run_text))
        check_page(br, W("tune-own.html"), "tune --html", rep + ["tunecands"])
        check_tune(br, W("tune-own.html"), run_rec, text_line(run_text))
        d = check_page(br, W("report-evil.html"), "report", rep)
        if "<script>alert(1)</script>" not in d["text"] or br.js("document.scripts.length") != 0:
            fail("a run's string became markup")
    finally:
        br.close()
    # Bad input: one line, exit 2, no file.
    for args in (["report", W("nope"), "--html", W("x.html")],
                 ["report", W("sim"), "--html", "/nonexistent-dir/x.html"],
                 ["compare", W("sim"), W("nope"), "--html", W("x.html")],
                 ["history", W("nope"), "--html", W("x.html")],
                 ["report", W("mpi"), "--tune", W("eight.json"), "--html", W("x.html")],
                 ["report", W("tune-ddp.json"), "--tune", W("tune-ddp.json"), "--html", W("x.html")]):
        p = run([BIN] + args, expect=2)
        if len(p.stderr.strip().splitlines()) != 1 or os.path.exists(W("x.html")):
            fail(f"{args}: want one line and no file: {p.stderr!r}")
    print("ok bad input: one line, exit 2, no file")


main()
