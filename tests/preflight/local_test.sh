#!/bin/bash
# preflight and topo on this host with real mpirun ranks.
#   local_test.sh MODE DLCOMM MPIRUN...
# pass: 4 ranks pass, every collective checked, JSON complete.
# corrupt: one rank's results are corrupted (DLCOMM_INJECT): exit 1, the
#   correctness lines name that rank and the verdict its host.
# baseline: world bandwidth judged against a baseline run (far above what is
#   measured fails, far below passes) and against a modelled system; a
#   modelled (sim) baseline is not comparable with an mpi preflight: SKIP.
# usage: bad options exit 2 and write nothing.
# broke: a hung rank ends the run with exit 3 and a JSON that says so.
# numa: rank binding against NUMA nodes on a made-up two-socket host.
# topo: one section per host with NUMA nodes and cores, in text and JSON.
set -euo pipefail
mode=$1 bin=$2
shift 2
mpirun=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(--sizes 256K --check-size 64K --scope-size 256K --timeout 60)

# injected INJECT WANT ARGS...: a 4-rank preflight with DLCOMM_INJECT=INJECT,
# its output shown and kept in $work/out.txt; its exit code must be WANT.
injected() {
  local inject=$1 want=$2 rc
  shift 2
  set +e
  DLCOMM_INJECT="$inject" "${mpirun[@]}" -x DLCOMM_INJECT -np 4 "$bin" preflight "$@" \
    --json "$work/pf.json" > "$work/out.txt" 2>&1
  rc=$?
  set -e
  cat "$work/out.txt"
  [ "$rc" -eq "$want" ] || { echo "DLCOMM_INJECT=$inject: exit $rc, expected $want"; exit 1; }
}

case $mode in
pass)
  "${mpirun[@]}" -np 4 "$bin" preflight "${common[@]}" --json "$work/pf.json"
  python3 - "$work/pf.json" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"]["status"] in ("pass", "warn") and d["exit_code"] == 0, d["verdict"]
corr = [c for c in d["checks"] if c["check"] == "correctness"]
assert sorted(c["subject"] for c in corr) == sorted(
    ["allreduce", "allgather", "broadcast", "reducescatter", "alltoall", "sendrecv", "reduce",
     "gather", "scatter", "alltoallv"]), corr
assert all(c["status"] == "pass" for c in corr)
# One host and no --baseline: every bandwidth figure was measured and none
# judged (fewer than 3 nodes decide nothing): a WARN that says what would.
v = d["verdict"]
assert v["status"] == "warn" and "--baseline RUN" in v["next_step"], v
node = [c for c in d["checks"] if c["check"] == "bandwidth" and c["scope"] == "node"]
assert node and all(c["status"] == "skip" and "no outlier test" in c["message"] for c in node), node
# Healthy ranks: the per-rank judgement ran and named no one.
st = [c for c in d["checks"] if c["check"] == "straggler"]
assert [c["status"] for c in st] == ["pass"] and not v["ranks"] and "stragglers" not in d, st
assert [c["check"] for c in d["checks"]].count("numa") == 4
assert d["topo"] and d["topo"][0]["cores"] >= 1 and d["topo"][0]["numa_nodes"]
assert d["scopes"]["world"]["ranks"] == 4 and d["scopes"]["node"][0]["busbw_gbps"] > 0
# Without a GPU the copy checks are one SKIP for the host, saying why; with
# GPUs, three figures per GPU measured, each with what it was judged by.
copy = [c for c in d["checks"] if c["check"] in ("gpu-copy", "h2d", "d2h")]
if copy and copy[0]["status"] == "skip":
    assert len(copy) == 1 and copy[0]["scope"] == "host", copy
    msg = copy[0]["message"]
    assert "no CUDA GPU is visible" in msg or "built without CUDA" in msg or "no NVIDIA driver" in msg, copy
    # Without the NVIDIA driver at all, the line says so (CUDA's own words
    # blame the driver's version, an upgrade no one can make).
    if not os.path.exists("/proc/driver/nvidia/version") and "built without CUDA" not in msg:
        assert "no NVIDIA driver on this host" in msg and "insufficient" not in msg, copy
else:
    assert copy and len(copy) % 3 == 0, copy
    assert all(c["figures"]["measured_gbps"] > 0 and c["figures"]["expected_from"] for c in copy), copy
PY
  ;;
straggler)
  # One slow rank of four on one host (entering each call late by 3x the
  # call): no host, rail or pair can be an outlier, the world figures only
  # drag. The per-rank judgement names that rank and its host: exit 1,
  # within the bound of docs/preflight.md for --quick on one host.
  injected "slow:2:*:4" 1 --backend mpi --quick
  grep -q "^FAIL straggler .* rank 2 ($(hostname), no GPU) late in " "$work/out.txt"
  grep -q "^VERDICT FAIL .*hosts=$(hostname) ranks=$(hostname):rank2" "$work/out.txt"
  python3 - "$work/pf.json" "$(hostname)" <<'PY'
import json, sys
d, host = json.load(open(sys.argv[1])), sys.argv[2]
v = d["verdict"]
assert v["status"] == "fail" and d["exit_code"] == 1, v
assert v["hosts"] == [host] and [(r["rank"], r["host"]) for r in v["ranks"]] == [(2, host)], v
s = d["stragglers"]
assert [(e["rank"], e["host"], e["confirmed"]) for e in s] == [(2, host, True)], s
assert "gpu" in s[0] and s[0]["late_rows"] >= 1 and s[0]["late_us"] > 0, s
# The bound (docs/preflight.md): world bandwidth and the scopes within
# 1.25 S x (2 #sizes + 2 + R + 2 s); --quick: S = 2 s, one size, no pair
# rounds on one host, one suspect.
spent = d["stage_s"]["bandwidth"] + d["stage_s"]["scopes"]
assert spent <= 1.25 * 2 * (2 * 1 + 2 + 0 + 2 * 1), d["stage_s"]
PY
  ;;
corrupt)
  injected corrupt:2 1 "${common[@]}" --scopes node
  grep -q '^FAIL correctness .*rank 2 (' "$work/out.txt"
  grep -q '^VERDICT FAIL .*hosts=' "$work/out.txt"
  python3 - "$work/pf.json" "$(hostname)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"]["hosts"] == [sys.argv[2]], d["verdict"]
assert d["exit_code"] == 1
PY
  ;;
baseline)
  "${mpirun[@]}" -np 4 "$bin" sweep -c allreduce,allgather -b 256K -e 256K --placement out -q \
    --out "$work/base" > /dev/null
  python3 - "$work/base/run.json" "$work" <<'PY'
import json, sys
for name, factor in (("high", 1000.0), ("low", 0.001)):
    d = json.load(open(sys.argv[1]))
    rows = [r for p in d["profiles"] for r in p["results"]]
    assert {r["collective"] for r in rows} == {"allreduce", "allgather"}, rows
    for r in rows:
        r["busbw_gbps"] *= factor
    json.dump(d, open(f"{sys.argv[2]}/{name}.json", "w"))
PY
  set +e
  "${mpirun[@]}" -np 4 "$bin" preflight "${common[@]}" --scopes node --baseline "$work/high.json" \
    > "$work/high.txt" 2>&1
  rc=$?
  set -e
  cat "$work/high.txt"
  [ "$rc" -eq 1 ] || { echo "baseline far above: expected exit 1, got $rc"; exit 1; }
  grep -q '^FAIL bandwidth .*world .*allreduce .*of baseline' "$work/high.txt"
  "${mpirun[@]}" -np 4 "$bin" preflight "${common[@]}" --scopes node --baseline "$work/low.json" \
    > "$work/low.txt" 2>&1 || { cat "$work/low.txt"; exit 1; }
  grep -q '^PASS bandwidth .*world .*allgather .*of baseline' "$work/low.txt"
  grep -q '^VERDICT PASS ' "$work/low.txt" # judged against a baseline: no WARN for want of one
  # A modelled 8-GPU NVLink node is far beyond CPU ranks: --system fails them,
  # named as sweep and report name one, or given as a path.
  for sys in h200-sxm-8 "$(dirname "$0")/../../topologies/systems/h200-sxm-8.json"; do
    set +e
    "${mpirun[@]}" -np 4 "$bin" preflight "${common[@]}" --scopes node \
      --system "$sys" > "$work/sys.txt" 2>&1
    rc=$?
    set -e
    [ "$rc" -eq 1 ] || { cat "$work/sys.txt"; echo "--system $sys: exit $rc, expected 1"; exit 1; }
    grep -q '^FAIL bandwidth .*world .*allreduce .*of modelled' "$work/sys.txt"
  done
  # A sim sweep's rows are a model of NVLink GPUs: given as --baseline to
  # this mpi preflight they are not comparable (SKIP with the reason), never
  # a FAIL, though its figures are far above what CPU ranks reach.
  "${mpirun[@]}" -np 4 "$bin" sweep --backend sim -c allreduce,allgather -b 256K -e 256K \
    --placement out -q --out "$work/simbase" > /dev/null
  "${mpirun[@]}" -np 4 "$bin" preflight "${common[@]}" --scopes node \
    --baseline "$work/simbase/run.json" --json "$work/sim.json" > "$work/sim.txt" 2>&1 ||
    { cat "$work/sim.txt"; echo "sim baseline: expected exit 0 (SKIP), got $?"; exit 1; }
  cat "$work/sim.txt"
  python3 - "$work/sim.json" "$work/simbase/run.json" <<'PY'
import json, sys
d, base = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rows = [r for p in base["profiles"] for r in p["results"] if r["collective"] == "allreduce"]
assert rows and all(p["backend"] == "sim" for p in base["profiles"]), base["profiles"]
world = [c for c in d["checks"] if c["check"] == "bandwidth" and c["scope"] == "world"]
assert sorted(c["subject"] for c in world) == ["allgather", "allreduce"], world
for c in world:
    assert c["status"] == "skip", c
    assert "not comparable" in c["message"] and "modelled" in c["message"], c
assert d["exit_code"] == 0, d["verdict"]
PY
  ;;
usage)
  for args in "--json /nonexistent-dir/pf.json" "--system $work/none.json" "--sizes 12Q" "--min-fraction 2" "--pairs some" "--scopes nodes" \
              "--baseline $work/none.json" "--bogus"; do
    set +e
    # shellcheck disable=SC2086 # the words are options
    "$bin" preflight --json "$work/pf.json" $args 2> "$work/err.txt"
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || { echo "preflight $args: exit $rc, expected 2"; exit 1; }
    [ "$(wc -l < "$work/err.txt")" -eq 1 ] || { cat "$work/err.txt"; exit 1; }
    [ ! -e "$work/pf.json" ] || { echo "preflight $args wrote a file"; exit 1; }
  done
  # A file's line names the file and the reason; a name that is none, the closest.
  set +e
  "$bin" preflight --system "$work/none.json" 2> "$work/err.txt"
  "$bin" preflight --system h200-sxm8 2>> "$work/err.txt"
  set -e
  grep -q "system $work/none.json: cannot be read: No such file or directory" "$work/err.txt" ||
    { cat "$work/err.txt"; exit 1; }
  grep -q "^dlcomm: error: --system h200-sxm8: no such system (did you mean 'h200-sxm-8'?)" \
    "$work/err.txt" || { cat "$work/err.txt"; exit 1; }
  ;;
broke)
  # A rank that hangs: the step times out, the job ends with exit 3 and the
  # JSON says which step broke.
  set +e
  DLCOMM_INJECT=hang:1 timeout 60 "${mpirun[@]}" -x DLCOMM_INJECT -np 4 "$bin" preflight \
    "${common[@]}" --timeout 4 --json "$work/pf.json" > "$work/out.txt" 2>&1
  rc=$?
  set -e
  cat "$work/out.txt"
  [ "$rc" -eq 3 ] || { echo "hang: exit $rc, expected 3"; exit 1; }
  grep -q '^VERDICT BROKE correctness allreduce timed out' "$work/out.txt"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["verdict"]["status"]=="broke" and d["exit_code"]==3, d' "$work/pf.json"
  ;;
numa)
  # A two-socket host from XML, taken as this system so bindings are real:
  # unbound ranks span both NUMA nodes (WARN with the fix), ranks bound to a
  # core sit in one (PASS).
  python3 "$(dirname "$0")/topo_paths.py" --write-xml "$work/host.xml"
  export HWLOC_XMLFILE=$work/host.xml HWLOC_THISSYSTEM=1
  for bind in none core; do
    "${mpirun[@]}" -x HWLOC_XMLFILE -x HWLOC_THISSYSTEM -np 2 --bind-to "$bind" "$bin" preflight \
      "${common[@]}" --scopes node --json "$work/$bind.json" > "$work/$bind.txt" 2>&1 \
      || { cat "$work/$bind.txt"; exit 1; }
    cat "$work/$bind.txt"
  done
  [ "$(grep -c '^WARN numa .*unbound (cpus 0-1 span 2 NUMA nodes): mpirun --bind-to numa' "$work/none.txt")" -eq 2 ]
  [ "$(grep -c '^PASS numa .*within one NUMA node' "$work/core.txt")" -eq 2 ]
  ;;
topo)
  "${mpirun[@]}" -np 2 "$bin" topo --json "$work/topo.json" | tee "$work/topo.txt"
  [ "$(grep -c '^# host ' "$work/topo.txt")" -eq 1 ]
  grep -q 'numa0  cpus ' "$work/topo.txt"
  python3 - "$work/topo.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h = d["hosts"]
assert len(h) == 1 and h[0]["cores"] >= 1 and h[0]["pus"] >= h[0]["cores"]
assert h[0]["numa_nodes"] and "gpu_gpu" in h[0] and "nics" in h[0]
PY
  ;;
*)
  echo "unknown mode $mode"; exit 2 ;;
esac

# Every preflight document and run.json the case wrote matches its schema
# (docs/schema/; the topology's own document is not one of them).
shopt -s nullglob
docs=()
for f in "$work"/*.json "$work"/*/run.json; do
  [ "$(basename "$f")" = topo.json ] || docs+=("$f")
done
if [ ${#docs[@]} -gt 0 ]; then
  python3 "$(dirname "$0")/../record_schema.py" "${docs[@]}"
fi
