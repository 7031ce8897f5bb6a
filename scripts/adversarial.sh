#!/bin/sh
# On demand, not in CI: the hardening classes wider than tests/hardening
# runs them (every group, signals included), then type mutations of a real
# run.json and random bytes through every reader (a reader may answer 0, 1
# or 2; anything else, a signal or a hang past 20 s is a finding), then the
# wide classes of scripts/adversarial_wide.py (argv from the option tables,
# --out and output files on special and full filesystems, stdout trouble,
# mutated input files, DLCOMM_INJECT grammar, secrets in profiles).
#   scripts/adversarial.sh [BUILD_DIR] [MUTATIONS] [SCALE]
# Defaults build, 400, 1 (about 14 minutes on 2 cores); SCALE multiplies
# the wide classes' counts (0.1: a two-minute look). Last figures:
# results/reference/hardening.md.
set -u
cd "$(dirname "$0")/.."
b=${1:-build}
n=${2:-400}
scale=${3:-1}
mpirun="mpirun --oversubscribe"
[ "$(id -u)" = 0 ] && mpirun="$mpirun --allow-run-as-root"
python3 tests/hardening/hardening_test.py --bin "$b/dlcomm" --mpirun "$mpirun" \
  defects options files encodings concurrency secrets signals wide
rc=$?
python3 - "$b/dlcomm" "$n" <<'PY' || rc=1
import json, os, random, subprocess, sys, tempfile
bin, n = os.path.abspath(sys.argv[1]), int(sys.argv[2])
rnd = random.Random(1717)
t = tempfile.mkdtemp(prefix="dlcomm-adv-")
good = os.path.join(t, "good")
subprocess.run([bin, "sweep", "--backend", "mpi", "-c", "all", "-b", "8", "-e", "1K", "-n", "3",
                "-w", "0", "-q", "--out", good], check=True)
doc = json.load(open(os.path.join(good, "run.json")))
weird = [None, True, -1, 0, 1e308, -1e308, "", "x" * 5000, [], {}, [1, "a"], {"a": None}, 2**63]
paths = []
def walk(o, p):
    paths.append(p)
    if isinstance(o, dict):
        for k, v in o.items():
            walk(v, p + [k])
    elif isinstance(o, list):
        for i, v in enumerate(o[:3]):
            walk(v, p + [i])
walk(doc, [])
def mutate():
    d = json.loads(json.dumps(doc))
    p = rnd.choice(paths[1:])
    o = d
    for k in p[:-1]:
        o = o[k]
    if rnd.random() < 0.2 and isinstance(o, dict):
        del o[p[-1]]
    else:
        o[p[-1]] = rnd.choice(weird)
    return json.dumps(d), p
findings, runs = [], 0
for i in range(n):
    if i % 5 == 4:
        body, p = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 4096))), "random"
        f = os.path.join(t, "m%d.json" % i)
        open(f, "wb").write(body)
    else:
        body, p = mutate()
        f = os.path.join(t, "m%d.json" % i)
        open(f, "w").write(body)
    for args in (["report", f], ["compare", os.path.join(good, "run.json"), f],
                 ["plot", f, "--out", os.path.join(t, "plot%d" % i)]):
        runs += 1
        try:
            r = subprocess.run([bin] + args, capture_output=True, timeout=20)
            bad = r.returncode not in (0, 1, 2)
            if r.returncode == 0 and args[0] == "plot":
                # a plot that says it wrote PNGs must have written them
                outd = args[-1]
                claimed = r.stdout.decode(errors="replace").count(".png")
                have = len([x for x in os.listdir(outd)]) if os.path.isdir(outd) else 0
                bad = bad or (claimed and not have)
        except subprocess.TimeoutExpired:
            bad, r = True, None
        if bad:
            findings.append((args[0], p, r.returncode if r else "timeout",
                             r.stderr.decode(errors="replace")[-200:] if r else ""))
print("adversarial: %d reader runs, %d findings" % (runs, len(findings)))
for x in findings[:40]:
    print("  ", x)
sys.exit(1 if findings else 0)
PY
python3 scripts/adversarial_wide.py --bin "$b/dlcomm" --mpirun "$mpirun" --scale "$scale" \
  --json "${TMPDIR:-/tmp}/dlcomm-adversarial-wide.json" || rc=1
exit $rc
