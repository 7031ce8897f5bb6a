#!/usr/bin/env python3
"""prom_watch_units: the systemd units of the scheduled check as `cmake --install`
puts them in PREFIX/share/dlcomm/systemd: ExecStart names the installed dlcomm,
`systemd-analyze verify` accepts both (it checks the executable, the settings,
the calendar and the man page), the timer's next start is a Monday, the
unit's SWEEP and PREFLIGHT are dlcomm watch's own defaults, and the service's
command line, expanded as systemd expands it (${VAR} one word, $VAR split at
blanks), runs a real check from / (2 ranks, sim backend) into a results
folder: exit 0 and a kept run.
usage: prom_watch_units.py CMAKE BUILD_DIR MPIRUN...
Exit 77 (skip) without systemd-analyze."""
import json, os, re, shlex, shutil, subprocess, sys, tempfile


def expect(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")


def main():
    cmake, build, mpirun = sys.argv[1], sys.argv[2], sys.argv[3:]
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        print("SKIP: systemd-analyze not installed (apt install systemd)")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="dlcomm-units.")
    try:
        run(cmake, build, mpirun, analyze, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(cmake, build, mpirun, analyze, tmp):
    prefix = os.path.join(tmp, "usr")
    subprocess.run([cmake, "--install", build, "--prefix", prefix], check=True,
                   stdout=subprocess.DEVNULL)
    units = os.path.join(prefix, "share", "dlcomm", "systemd")
    service, timer = (os.path.join(units, f"dlcomm-watch.{k}") for k in ("service", "timer"))
    expect(os.path.isfile(service) and os.path.isfile(timer), f"units not installed in {units}")
    text = open(service).read()
    m = re.search(r"^ExecStart=(.+)$", text, re.M)
    expect(m and shlex.split(m.group(1))[0] == os.path.join(prefix, "bin", "dlcomm"),
           f"ExecStart {m and m.group(1)!r} does not name {prefix}/bin/dlcomm")
    env = dict(os.environ, MANPATH=os.path.join(prefix, "share", "man"))  # Documentation=man:dlcomm-watch(1)
    v = subprocess.run([analyze, "verify", service, timer], env=env, capture_output=True, text=True)
    expect(v.returncode == 0 and not v.stderr.strip(),
           f"systemd-analyze verify: exit {v.returncode}: {v.stderr.strip()}")
    cal = re.search(r"^OnCalendar=(.+)$", open(timer).read(), re.M).group(1)
    c = subprocess.run([analyze, "calendar", cal], capture_output=True, text=True)
    nxt = re.search(r"Next elapse: (\w+)", c.stdout)
    expect(c.returncode == 0 and nxt and nxt.group(1) == "Mon", f"calendar {cal!r}: {c.stdout}")
    defaults = {o["name"]: o.get("default") for o in json.loads(subprocess.run(
        [os.path.join(prefix, "bin", "dlcomm"), "__options"], capture_output=True, text=True,
        check=True).stdout)["watch"]}
    for var, opt in (("SWEEP", "sweep"), ("PREFLIGHT", "preflight")):
        unit = re.search(rf'^Environment="{var}=(.*)"$', text, re.M)
        expect(unit and unit.group(1) == defaults[opt],
               f"the unit's {var} {unit and unit.group(1)!r}, watch's default {defaults[opt]!r}")
    # The command systemd would run, with what /etc/default/dlcomm-watch would say.
    results, textdir = os.path.join(tmp, "watch"), os.path.join(tmp, "textfile")
    os.makedirs(textdir)
    values = {
        "SWEEP": "--backend sim -c allreduce -b 1M -e 1M -q",
        "PREFLIGHT": "--quick --backend sim",
        "OPTS": f"--results {results} --textfile {textdir} --keep 4",
        "LAUNCHER": " ".join(mpirun + ["-np", "2"]),
    }
    argv = []
    for word in shlex.split(m.group(1)):
        braced = re.fullmatch(r"\$\{(\w+)\}", word)
        if braced:
            argv.append(values[braced.group(1)])
        elif word.startswith("$"):
            argv += values[word[1:]].split()
        else:
            argv.append(word)
    p = subprocess.run(argv, cwd="/", capture_output=True, text=True, timeout=120)
    expect(p.returncode == 0, f"{argv}: exit {p.returncode}\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    runs = [n for n in os.listdir(results) if not n.startswith(".")]
    expect(len(runs) == 1 and os.path.isfile(os.path.join(results, runs[0], "sweep", "run.json")),
           f"results folder holds {runs}")
    expect(sorted(os.listdir(textdir)) ==
           ["dlcomm-preflight.prom", "dlcomm-sweep.prom", "dlcomm-watch.prom"],
           f"textfile folder holds {os.listdir(textdir)}")
    print(f"ok: units verified; next start {nxt.group(1)}; ExecStart ran a check into {runs[0]}")


main()
