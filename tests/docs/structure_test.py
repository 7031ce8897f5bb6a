#!/usr/bin/env python3
"""The code's shape, held where the review set it (docs/dev/engine.md and
the job layer's header say why): no function in src/ longer than 80 lines,
cmd_sweep.c a thin command, no command including another command's code,
and preflight never asking for a backend by name.

  structure_test.py SRC_DIR [selftest]

selftest: the function scan must find a long function it is shown."""
import glob
import os
import re
import sys

MAX_FN = 80
START = re.compile(r"^[A-Za-z_][^;]*\)\s*\{?\s*$")


def functions(text):
    """(first line, lines, name) of each function defined at column 0."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        opens = line == "{" or (START.match(line) and line.rstrip().endswith("{"))
        if opens and not line.startswith(("struct", "typedef", "enum", "union")) \
                and " = " not in line:
            k = i if line != "{" else i - 1
            while k > 0 and not re.match(r"^[A-Za-z_]", lines[k]):
                k -= 1
            m = re.search(r"(\w+)\s*\(", lines[k])
            e = i + 1
            while e < len(lines) and lines[e] != "}":
                e += 1
            out.append((k + 1, e - k + 1, m.group(1) if m else lines[k]))
            i = e
        i += 1
    return out


def main():
    src = sys.argv[1]
    if sys.argv[2:] == ["selftest"]:
        body = "static int f(void)\n{\n" + "    x++;\n" * 90 + "}\n"
        found = functions(body)
        ok = found and found[0][1] > MAX_FN and found[0][2] == "f"
        print("ok" if ok else "FAIL: the scan missed a 92-line function: %s" % found)
        return 0 if ok else 1
    fails = []
    for path in sorted(glob.glob(os.path.join(src, "src", "**", "*.c"), recursive=True)):
        rel = os.path.relpath(path, src)
        text = open(path, errors="replace").read()
        for first, n, name in functions(text):
            if n > MAX_FN:
                fails.append("%s:%d %s is %d lines (at most %d)" % (rel, first, name, n, MAX_FN))
        if os.path.basename(path).startswith("cmd_"):
            for inc in re.findall(r'#include\s+"([^"]+)"', text):
                if os.path.basename(inc).startswith("cmd_"):
                    fails.append("%s includes another command's code (%s)" % (rel, inc))
    sweep = open(os.path.join(src, "src", "cmd_sweep.c")).read().count("\n")
    if sweep > 350:
        fails.append("src/cmd_sweep.c is %d lines (a thin command: at most about 350)" % sweep)
    for path in glob.glob(os.path.join(src, "src", "preflight", "*.c")) + \
            [os.path.join(src, "src", "cmd_preflight.c")]:
        if '"sim"' in open(path).read():
            fails.append("%s asks for the sim by name (ask dl_backend_model())"
                         % os.path.relpath(path, src))
    for f in fails:
        print("FAIL: " + f)
    print("ok" if not fails else "%d failures" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
