#!/usr/bin/env python3
"""Text a user reads in columns keeps them: each command's --help starts
every option's description in one column (-h, --help included), and
`dlcomm profiles` starts each field of every row where its header does,
however long a profile's intent is. Standard library only."""
import re
import subprocess
import sys

BIN = sys.argv[1]
failures = []


def out(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=20)
    assert p.returncode == 0, (args, p.returncode, p.stderr)
    return p.stdout


for cmd in ["sweep", "preflight", "compare", "watch", "tune", "report", "plot", "history", "topo"]:
    lines = [l for l in out(cmd, "--help").split("\n") if re.match(r"  (-\w, )?    --|  -\w, --", l)]
    cols = {len(re.match(r"(.{34} )", l).group(1)) if len(l) > 35 and l[34] == " " and l[35] != " "
            else -1 for l in lines}
    if cols != {35} or not any("--help" in l for l in lines):
        failures.append("%s --help: descriptions start in columns %s: %s" % (
            cmd, sorted(cols), [l[:50] for l in lines if not (len(l) > 35 and l[34] == " " and l[35] != " ")]))

text = out("profiles").split("\n")
header = next(l for l in text if l.startswith("# name"))
at = header.index("applies")
for l in text:
    if l and not l.startswith("#") and not l.lstrip().startswith("env:"):
        name = l.split()[0]
        if l[at - 1] != " " or l[at] == " ":
            failures.append("profiles: row %s does not start 'applies' at column %d: %r" % (name, at, l[:80]))

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
