# Shared by the install tests: run an installed dlcomm from another working
# directory and check what users rely on. Sourced; set -eu is on.
fail() { echo "FAIL: $*" >&2; exit 1; }

# sim_sweep BIN PROFILES OUTDIR: a 2-rank modelled sweep from /, each
# profile ok in run.json.
sim_sweep() {
  (cd / && $DL_MPIRUN -np 2 "$1" sweep --backend sim -p "$2" -b 8 -e 64K -q --out "$3") ||
    fail "$1 sweep --backend sim -p $2 exited $?"
  python3 - "$3/run.json" "$2" <<'PY' || fail "run.json of $1 does not hold every profile ok"
import json, sys
run = json.load(open(sys.argv[1]))
want = sys.argv[2].split(",")
got = [(p["name"], p["status"]) for p in run["profiles"]]
assert got == [(w, "ok") for w in want], got
assert run["versions"]["dlcomm"] == run["tool_version"], run["versions"]
PY
}

# profiles_from BIN DIR: `dlcomm profiles` from / lists the shipped profiles
# and says it searched DIR.
profiles_from() {
  out=$(cd / && "$1" profiles) || fail "$1 profiles exited $?"
  echo "$out" | grep -q "^# searched: .*$2" || fail "$1 profiles did not search $2: $(echo "$out" | head -1)"
  for p in default p2p-off socket; do
    echo "$out" | grep -q "^$p " || fail "$1 profiles does not list $p"
  done
}
