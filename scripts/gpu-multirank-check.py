#!/usr/bin/env python3
"""Checks what scripts/gpu-multirank.sh ran: one PASS/FAIL line a case,
with the figures behind it. Usage: gpu-multirank-check.py DIR GPUS.
Exit 1 when a case failed."""
import glob
import json
import os
import re
import sys

W, GPUS = sys.argv[1], int(sys.argv[2])
failed = 0


def say(name, ok, text):
    global failed
    failed += not ok
    print("%-18s %s  %s" % (name, "PASS" if ok else "FAIL", text))


def read(name, ext):
    try:
        return open(os.path.join(W, name + ext)).read().strip()
    except OSError:
        return ""


def run_of(name):
    try:
        return json.load(open(os.path.join(W, name, "run.json")))
    except (OSError, ValueError):
        return None


def base(name):
    rc = read(name, ".rc")
    return int(rc) if rc.lstrip("-").isdigit() else None, read(name, ".time")


def err_tail(name):
    lines = [l for l in read(name, ".err").splitlines() if "dlcomm" in l or "error" in l.lower()]
    return " | ".join(lines[-2:])


def rows(run, prof=None):
    for p in run["profiles"]:
        if prof is None or p["name"] == prof:
            for r in p.get("results", []):
                yield p, r


def loaded(name):
    """A case's exit code, seconds and run.json; a FAIL line when it wrote none."""
    rc, t = base(name)
    run = run_of(name)
    if run is None:
        say(name, False, "rc %s, no run.json: %s" % (rc, err_tail(name)))
    return rc, t, run


def choice(r):
    return "%s/%s/%s" % (r.get("algo", "-"), r.get("proto", "-"), r.get("nchannels", "-"))


def check_sweep(name, n):
    rc, t, run = loaded(name)
    if run is None:
        return
    rs = [r for _, r in rows(run)]
    wrong = sum(r["wrong"] or 0 for r in rs)
    colls = sorted({r["collective"] for r in rs})
    nochoice = [r for r in rs if not r.get("algo") or not r.get("nchannels")
                or (r["algo"] != "P2P" and not r.get("proto"))]
    shared = all(r.get("shared_gpu", 0) == n for r in rs) if n > GPUS else True
    switches = sorted({(r["collective"], r["bytes"], choice(r)) for r in rs if r["dtype"] == "float32"
                       and r["op"] in ("sum", None) and r["placement"] == "out"})
    ok = rc == 0 and wrong == 0 and len(colls) == 10 and not nochoice and shared \
        and run["fingerprint"]["ranks"] == n
    say(name, ok, "rc %s, %.0f s, %d rows, %d collectives, %d wrong, %d rows without a choice, "
        "shared_gpu label %s; float32 sum out: %s" % (
            rc, float(t or 0), len(rs), len(colls), wrong, len(nochoice),
            "ok" if shared else "MISSING",
            "; ".join("%s %d B %s" % s for s in switches)))


FORCED = {"ring": ("algo", "RING"), "tree": ("algo", "TREE"), "ll": ("proto", "LL"),
          "ll128": ("proto", "LL128"), "simple": ("proto", "SIMPLE")}


def check_profiles(name):
    rc, t, run = loaded(name)
    if run is None:
        return
    bad, notes = [], []
    for p in run["profiles"]:
        st = p.get("status")
        info = p.get("backend_info", {}) or {}
        obs = p.get("observed_transports", {}) or {}
        rs = p.get("results", [])
        if st != "ok" or any((r["wrong"] or 0) for r in rs):
            bad.append("%s %s" % (p["name"], st))
        colls = sorted({r["collective"] for r in rs})
        want = ["allreduce"] if p["name"] == "tree" else ["allgather", "allreduce"]
        if colls != want:  # NCCL has no Tree all-gather: that profile leaves it out
            bad.append("%s ran %s, want %s" % (p["name"], ",".join(colls), ",".join(want)))
        key = FORCED.get(p["name"])
        seen = sorted({r.get(key[0], "-") for r in rs if r["collective"] == "allreduce"}) if key else []
        if key and seen != [key[1]]:
            bad.append("%s chose %s" % (p["name"], ",".join(seen)))
        notes.append("%s: %s; transports %s; honoured %s; chose %s" % (
            p["name"], st, json.dumps(obs.get("transports", {})),
            json.dumps({k: v for k, v in obs.get("env_applied", {}).items()
                        if k not in ("NCCL_HOSTID", "NCCL_PROFILER_PLUGIN")}),
            ",".join(sorted({choice(r) for r in rs if r["collective"] == "allreduce"}))))
    said = [l for l in read(name, ".err").splitlines() if "left out" in l]
    if len(said) != 1 or "allgather left out: NCCL_ALGO=Tree" not in said[0]:
        bad.append("not said once that tree leaves all-gather out: %s" % said)
    notes.insert(0, said[0] if len(said) == 1 else "-")
    say(name, rc == 0 and not bad, "rc %s, %.0f s; %s%s" % (
        rc, float(t or 0), "; ".join(bad) + " || " if bad else "", " || ".join(notes)))


def check_plain(name):
    rc, t, run = loaded(name)
    if run is None:
        return
    rs = [r for _, r in rows(run)]
    wrong = sum(r["wrong"] or 0 for r in rs)
    groups = sorted({r.get("group", -1) for r in rs})
    say(name, rc == 0 and wrong == 0 and rs, "rc %s, %.0f s, %d rows, %d wrong, groups %s" % (
        rc, float(t or 0), len(rs), wrong, groups))


def check_slow(name, n, r):
    rc, t, run = loaded(name)
    if run is None:
        return
    named = sorted({s["rank"] for s in run.get("stragglers", [])})
    rs = [x for _, x in rows(run)]
    if n < 3:  # two ranks: neither can be told the late one (docs/sweep.md)
        late = [x.get("rank_late_us") for x in rs]
        return say(name, named == [], "rc %s: 2 ranks, none named (by design); lateness per rank, "
                   "first row %s" % (rc, late[0] if late else "-"))
    say(name, named == [r], "rc %s, %.0f s, stragglers named %s (injected %d)" % (
        rc, float(t or 0), named, r))


def check_pf(name, want_rc, want_host):
    rc, t = base(name)
    try:
        doc = json.load(open(os.path.join(W, name + ".json")))
    except (OSError, ValueError):
        doc = {}
    out = read(name, ".out")
    verdict = [l for l in out.splitlines() if l.startswith("VERDICT")]
    m = re.search(r"\bhosts=(\S+)", verdict[-1]) if verdict else None
    hosts = sorted(m.group(1).split(",")) if m else []
    ok = rc == want_rc and (want_host is None or hosts == [want_host])
    say(name, ok, "rc %s (want %d), %.1f s, %s; hosts named %s" % (
        rc, want_rc, float(t or 0), verdict[-1] if verdict else "no VERDICT", hosts))


def check_tune(name):
    rc, t = base(name)
    try:
        doc = json.load(open(os.path.join(W, name + ".json")))
    except (OSError, ValueError):
        return say(name, False, "rc %s, no JSON: %s" % (rc, err_tail(name)))
    rec = doc.get("recommendation") or doc.get("recommended")
    cands = doc.get("candidates", [])
    say(name, rc == 0 and bool(rec) and len(cands) >= 2, "rc %s, %.0f s, %d candidates, "
        "recommendation %s; %s" % (rc, float(t or 0), len(cands), json.dumps(rec)[:200],
                                   read(name, ".out").splitlines()[-3:]))


def check_signals():
    rc, _ = base("sig-kill")
    run = run_of("sig-kill")
    st = {p["name"]: p.get("status") for p in run["profiles"]} if run else {}
    say("sig-kill", rc == 3 and st.get("default") == "crashed" and st.get("ring") == "ok",
        "rc %s, worker %s killed, profiles %s" % (rc, read("sig-kill", ".killed"), st))
    rc, t = base("sig-launch")
    run = run_of("sig-launch")
    n = len([r for _, r in rows(run)]) if run else 0
    say("sig-launch", rc == 3 and run is not None and n > 0,
        "rc %s, %.1f s, run.json %s with %d rows kept" % (
            rc, float(t or 0), run["profiles"][0].get("status") if run else "missing", n))
    left = read("sig-after", ".txt")
    say("sig-after", left == "", "left after: %s" % (left or "no process, no GPU memory"))


def check_choice():
    runs = {}
    for path in sorted(glob.glob(os.path.join(W, "choice-*", "run.json"))):
        mode = os.path.basename(os.path.dirname(path)).split("-")[1]
        for _, r in rows(json.load(open(path))):
            runs.setdefault((r["bytes"], r["placement"]), {}).setdefault(mode, []).append(
                (r["time_us"]["mean"] if isinstance(r["time_us"], dict) else r["time_us"], choice(r)))
    # Per size: the median of the rounds with the plugin loaded against the
    # median without it, judged against the rounds' own spread (a host's
    # pace drifts between sweeps): a difference inside what repeating the
    # same sweep moves is no difference; outside it, at most 5%.
    worst, bad, lines = 0.0, [], []
    for (b, pl), m in sorted(runs.items()):
        if "on" not in m or "off" not in m:
            continue
        on = sorted(x[0] for x in m["on"])
        off = sorted(x[0] for x in m["off"])
        mon, moff = on[len(on) // 2], off[len(off) // 2]
        diff = abs(mon - moff) / moff
        spread = max((on[-1] - on[0]) / mon, (off[-1] - off[0]) / moff)
        worst = max(worst, diff)
        if diff > 0.05 and diff > spread:
            bad.append(b)
        lines.append("%d B: %.2f vs %.2f us (%+.1f%%, rounds spread %.1f%%)" % (
            b, mon, moff, 100 * (mon - moff) / moff, 100 * spread))
    # One rank: NCCL copies locally and chooses nothing, so no row has a
    # choice; what is compared is the timed calls with the plugin loaded
    # (unarmed) and without it.
    n = min((len(m.get("on", [])) for m in runs.values()), default=0)
    say("choice-on-off", bool(lines) and not bad,
        "median of %d rounds each; largest difference %.1f%%; sizes outside 5%% and the rounds' "
        "spread: %s; %s" % (n, 100 * worst, bad or "none", "; ".join(lines)))


for rcf in sorted(glob.glob(os.path.join(W, "*.rc"))):
    name = os.path.basename(rcf)[:-3]
    m = re.match(r"(sweep|slow)-(\d+)(?:-r(\d+))?$", name)
    if m and m.group(1) == "sweep":
        check_sweep(name, int(m.group(2)))
    elif m:
        check_slow(name, int(m.group(2)), int(m.group(3)))
    elif name == "profiles-4":
        check_profiles(name)
    elif re.match(r"(split|reg|graph|curve)", name):
        check_plain(name)
    elif name.startswith("pf-"):
        want = {"pf-healthy": (0, None), "pf-slow": (1, "/r2"), "pf-corrupt": (1, "/r1"),
                "pf-hang": (3, None)}[name]
        host = None
        if want[1]:
            host = [h for h in re.findall(r"[A-Za-z0-9_.-]+/r\d+", read(name, ".out"))
                    if h.endswith(want[1])]
            host = host[0] if host else "?" + want[1]
        check_pf(name, want[0], host)
    elif name.startswith("tune-"):
        check_tune(name)
if os.path.exists(os.path.join(W, "sig-kill.rc")):
    check_signals()
if glob.glob(os.path.join(W, "choice-*.rc")):
    check_choice()
sys.exit(1 if failed else 0)
