#!/usr/bin/env python3
"""prom_dashboard: the Grafana dashboard has what Grafana's dashboard schema
(the dashboard kind, schema 0.0) requires: schemaVersion (uint16); each panel
a non-empty type, gridPos with integer h, w, x, y; each template variable a
name and a type; and every ${VAR} a datasource names is a variable of type
datasource. It is not loaded into a running Grafana (none is packaged here).
Every dlcomm_ metric the dashboard and the alert rules use must be one the
writers (the C sources given) write, and the dashboard must show the run's
figures, the last preflight verdict per host and the scheduled check.
usage: prom_dashboard.py DASHBOARD.json RULES.yml SOURCE.c..."""
import json, re, sys

NAME = re.compile(r"\bdlcomm_[a-z_]+")


def written_by(sources):
    names = set()
    for path in sources:
        with open(path) as f:
            names |= set(re.findall(r'"(dlcomm_[a-z_]+)[\s"{]', f.read()))
    return names


def check_dashboard(dash, written, errs):
    sv = dash.get("schemaVersion")
    if not isinstance(sv, int) or isinstance(sv, bool) or not 0 <= sv <= 65535:
        errs.append("schemaVersion must be a uint16")
    if not isinstance(dash.get("title"), str) or not dash["title"]:
        errs.append("no title")
    variables = dash.get("templating", {}).get("list", [])
    for v in variables:
        if not isinstance(v.get("name"), str) or not isinstance(v.get("type"), str):
            errs.append(f"template variable {v!r}: needs name and type")
    ds_vars = {v.get("name") for v in variables if v.get("type") == "datasource"}
    panels = dash.get("panels")
    if not isinstance(panels, list) or not panels:
        errs.append("no panels")
        panels = []
    used = set()
    for i, p in enumerate(panels):
        where = f"panel {i} ({p.get('title')!r})"
        if not isinstance(p.get("type"), str) or not p["type"]:
            errs.append(f"{where}: no type")
        g = p.get("gridPos")
        if not isinstance(g, dict) or not all(isinstance(g.get(k), int) for k in "hwxy"):
            errs.append(f"{where}: gridPos needs integer h, w, x, y")
        for ref in re.findall(r"\$\{(\w+)\}", json.dumps(p.get("datasource", {}))):
            if ref not in ds_vars:
                errs.append(f"{where}: datasource ${{{ref}}} is no datasource variable")
        targets = p.get("targets")
        if not isinstance(targets, list) or not targets:
            errs.append(f"{where}: no targets")
            continue
        for t in targets:
            expr = t.get("expr") if isinstance(t, dict) else None
            names = set(NAME.findall(expr or ""))
            if not names:
                errs.append(f"{where}: target without a dlcomm_ expr")
            for n in names - written:
                errs.append(f"{where}: {n} is not written by dlcomm")
            used |= names
    for need in ("dlcomm_busbw_gbps", "dlcomm_time_us", "dlcomm_profile_ok", "dlcomm_preflight_ok",
                 "dlcomm_preflight_checks_failed", "dlcomm_watch_regressions"):
        if need not in used:
            errs.append(f"no panel shows {need}")
    return panels, used


def check_rules(rules_text, written, errs):
    exprs = re.findall(r"^\s*expr:\s*(.+)$", rules_text, re.M)
    used = set()
    for e in exprs:
        used |= set(NAME.findall(e))
    for n in used - written:
        errs.append(f"rules: {n} is not written by dlcomm")
    for need in ("dlcomm_preflight_ok", "dlcomm_watch_regressions", "dlcomm_busbw_gbps"):
        if need not in used:
            errs.append(f"rules: no rule on {need}")
    return used


def main():
    dash_path, rules_path, sources = sys.argv[1], sys.argv[2], sys.argv[3:]
    written = written_by(sources)
    if not {"dlcomm_busbw_gbps", "dlcomm_preflight_ok", "dlcomm_watch_regressions"} <= written:
        sys.exit(f"FAIL: found too few metric names in {sources}: {sorted(written)}")
    with open(dash_path) as f:
        dash = json.load(f)
    with open(rules_path) as f:
        rules = f.read()
    errs = []
    panels, used = check_dashboard(dash, written, errs)
    in_rules = check_rules(rules, written, errs)
    if errs:
        sys.exit("FAIL: " + "; ".join(errs))
    print(f"ok: {len(panels)} panels, metrics {sorted(used)}; rules use {sorted(in_rules)}")


main()
