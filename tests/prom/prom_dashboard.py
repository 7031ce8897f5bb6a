#!/usr/bin/env python3
"""prom_dashboard: the Grafana dashboard has the fields Grafana's dashboard
schema requires (title; panels with type and gridPos; targets with expr), and
every dlcomm_ metric its expressions use is one src/analysis/prom.c writes.
usage: prom_dashboard.py DASHBOARD.json prom.c"""
import json, re, sys

def main():
    dash_path, prom_c = sys.argv[1], sys.argv[2]
    with open(dash_path) as f:
        dash = json.load(f)
    with open(prom_c) as f:
        written = set(re.findall(r'"(dlcomm_[a-z_]+)[\s"{]', f.read()))
    if "dlcomm_busbw_gbps" not in written:
        sys.exit(f"FAIL: found no metric names in {prom_c}")
    errs = []
    if not isinstance(dash.get("title"), str) or not dash["title"]:
        errs.append("no title")
    panels = dash.get("panels")
    if not isinstance(panels, list) or not panels:
        errs.append("no panels")
        panels = []
    used = set()
    for i, p in enumerate(panels):
        where = f"panel {i} ({p.get('title')!r})"
        if not isinstance(p.get("type"), str):
            errs.append(f"{where}: no type")
        g = p.get("gridPos")
        if not isinstance(g, dict) or not all(isinstance(g.get(k), int) for k in "hwxy"):
            errs.append(f"{where}: gridPos needs integer h, w, x, y")
        targets = p.get("targets")
        if not isinstance(targets, list) or not targets:
            errs.append(f"{where}: no targets")
            continue
        for t in targets:
            expr = t.get("expr") if isinstance(t, dict) else None
            names = set(re.findall(r"\bdlcomm_[a-z_]+", expr or ""))
            if not names:
                errs.append(f"{where}: target without a dlcomm_ expr")
            for n in names - written:
                errs.append(f"{where}: {n} is not written by prom.c")
            used |= names
    for need in ("dlcomm_busbw_gbps", "dlcomm_time_us", "dlcomm_profile_ok"):
        if need not in used:
            errs.append(f"no panel shows {need}")
    if errs:
        sys.exit("FAIL: " + "; ".join(errs))
    print(f"ok: {len(panels)} panels, metrics {sorted(used)}")

main()
