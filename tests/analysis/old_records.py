#!/usr/bin/env python3
"""Compatibility: run.json files written by EARLIER dlcomm versions
(tests/data/old-records, made by make.sh there with each old build) are
read by this dlcomm's compare and report with the same figures and exit
codes the old dlcomm gave, and they match the record's schema.

  old_records.py DLCOMM DATA_DIR

For each TAG.cmds line (NAME<TAB>ARGS): the old output is TAG-NAME.out
(its last line "exit N"). JSON output: every member the old output had is
in the new one with the same value (a number within 1e-9 relative; new
members may be added; prose, a string with a space, may be reworded).
Text output: each number of the old output is in the new one, and each
row of compare's verdict table is as it was (prose may be reworded)."""
import collections
import glob
import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import record_schema  # noqa: E402

BIN, DATA = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
failures = []
NUMBER = re.compile(r"(?<![\w.])[-+]?[0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?%?(?![\w.])")
VERDICT = re.compile(r"^  (regression|improvement|unchanged|noise|wrong) ")


def same(old, new, where):
    """Old's members all in new, equal; returns the first difference or None."""
    if isinstance(old, dict):
        if not isinstance(new, dict):
            return "%s: an object became %r" % (where, new)
        for k, v in old.items():
            if k not in new:
                return "%s.%s: gone" % (where, k)
            d = same(v, new[k], "%s.%s" % (where, k))
            if d:
                return d
        return None
    if isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            return "%s: %d entries, now %s" % (where, len(old), len(new) if isinstance(new, list) else new)
        for i, (a, b) in enumerate(zip(old, new)):
            d = same(a, b, "%s[%d]" % (where, i))
            if d:
                return d
        return None
    if isinstance(old, (int, float)) and not isinstance(old, bool):
        ok = isinstance(new, (int, float)) and not isinstance(new, bool) and \
            math.isclose(old, new, rel_tol=1e-9, abs_tol=1e-12)
        return None if ok else "%s: %r, now %r" % (where, old, new)
    if isinstance(old, str) and " " in old:
        return None if isinstance(new, str) else "%s: %r, now %r" % (where, old, new)  # prose
    return None if old == new else "%s: %r, now %r" % (where, old, new)


def split_exit(text):
    lines = text.rstrip("\n").split("\n")
    return "\n".join(lines[:-1]) + "\n", lines[-1]


def check_cmd(tag, name, args):
    with open(os.path.join(DATA, "%s-%s.out" % (tag, name))) as f:
        old, old_exit = split_exit(f.read())
    p = subprocess.run([BIN] + args, cwd=DATA, capture_output=True, text=True, timeout=60)
    what = "%s %s (dlcomm %s)" % (tag, name, " ".join(args))
    if "exit %d" % p.returncode != old_exit:
        failures.append("%s: %s then, exit %d now: %s" % (what, old_exit, p.returncode, p.stderr.strip()))
        return
    if "--json" in args:
        try:
            new = json.loads(p.stdout)
        except ValueError as e:
            failures.append("%s: not JSON now (%s)" % (what, e))
            return
        d = same(json.loads(old), new, "$")
        if d:
            failures.append("%s: %s" % (what, d))
        return
    # The figures: each number of the old output is in the new one (as
    # often), and each row of a verdict table is as it was.
    have = collections.Counter(NUMBER.findall(p.stdout))
    for n, count in collections.Counter(NUMBER.findall(old)).items():
        if have[n] < count:
            failures.append("%s: the figure %s (%d times then) is %d times in the new output:\n%s"
                            % (what, n, count, have[n], p.stdout))
            return
    lines = set(p.stdout.split("\n"))
    for line in old.split("\n"):
        if VERDICT.match(line) and line not in lines:
            failures.append("%s: this row is not in the new output:\n  %s\nnew:\n%s"
                            % (what, line, p.stdout))
            return

def schema_has_teeth():
    """The schema refuses what a reader could not take: a status it does not
    know, a row without its size, a figure that is text."""
    with open(os.path.join(DATA, "9fd692f-crash.json")) as f:
        doc = json.load(f)
    bad = [("status", lambda d: d["profiles"][0].update(status="finished")),
           ("bytes", lambda d: d["profiles"][1]["results"][0].pop("bytes")),
           ("busbw", lambda d: d["profiles"][1]["results"][0].update(busbw_gbps="fast"))]
    for what, spoil in bad:
        d = json.loads(json.dumps(doc))
        spoil(d)
        if not record_schema.validate(d):
            failures.append("the schema takes a run.json with a bad %s" % what)


schema_has_teeth()
tags = sorted(os.path.basename(c)[:-5] for c in glob.glob(os.path.join(DATA, "*.cmds")))
if len(tags) < 1:
    sys.exit("FAIL: no old records under %s" % DATA)
ncmds = 0
for tag in tags:
    for path in sorted(glob.glob(os.path.join(DATA, tag + "-*.json"))):
        failures += record_schema.validate_file(path)
    with open(os.path.join(DATA, tag + ".cmds")) as f:
        for line in f:
            name, args = line.rstrip("\n").split("\t")
            check_cmd(tag, name, args.split())
            ncmds += 1
if failures:
    print("FAIL:\n" + "\n".join(failures))
    sys.exit(1)
print("ok: %d commands over the records of %s read as they were" % (ncmds, ", ".join(tags)))
