#!/bin/bash
# preflight on the netns rig: HOSTS namespaces x 2 ranks over TCP.
#   rig_test.sh DLCOMM HOSTS healthy|throttled|link|quick100|simslow|plan|plansim
# healthy: exit 0 and no host named. throttled: one host's link limited with
# tc tbf; exit 1 and the JSON verdict names exactly that host. link: only the
# traffic between two hosts limited; exit 1, that pair named and no host.
# quick100: `preflight --quick` as a user runs it (default sizes: 64 MiB world,
# 16 MiB scopes) with one host at 100 Mbit/s; exit 1 naming that host alone.
# simslow: --backend sim in worker processes, DLCOMM_INJECT=slow on one rank of
# a host that is not rank 0's: exit 1 and exactly that rank's host named.
# plan: two faults at once, one host at 100 Mbit/s and the link between hosts
# 2 and 3 at 200 Mbit/s, found by the adaptive planner (--quick --scopes
# node,rail,plan): exit 1, that host and that link named and nothing else
# (the host as a host, not as its links; the link as a pair, not its hosts).
# plansim: simslow's slow rank, found by the planner alone (--scopes plan) through
# the sim's worker processes: exit 1, that rank's host named and nothing else.
# Every mode: the preflight run must take under 60 s (90 s for plan, 8 hosts). Exit 77 (skip) where
# namespaces are not permitted. DLRIG_PREFIX/DLRIG_NET choose the rig's names
# and subnet (defaults pft, 10.213.78).
set -euo pipefail
bin=$1 hosts=$2 mode=$3
here=$(cd "$(dirname "$0")" && pwd)
rig=$here/../../scripts/netns-rig.sh
export DLRIG_PREFIX=${DLRIG_PREFIX:-pft} DLRIG_NET=${DLRIG_NET:-10.213.78}
pre=$DLRIG_PREFIX
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the netns rig needs root (network namespaces, bridge, tc)"; exit 77
fi
if ! "$rig" check; then
  echo "SKIP: network namespaces are not permitted here"; exit 77
fi
work=$(mktemp -d)
trap '"$rig" down; rm -rf "$work"' EXIT
"$rig" up "$hosts"
bad="" link=""
sizes=(--sizes 256K --check-size 64K --scope-size 256K)
extra=()
if [ "$mode" = throttled ]; then
  bad=$pre$(( (hosts + 1) / 2 + 1 ))   # not the host of rank 0
  "$rig" throttle "$bad" 10mbit
elif [ "$mode" = quick100 ]; then
  bad=$pre$(( (hosts + 1) / 2 + 1 ))
  "$rig" throttle "$bad" 100mbit
  sizes=(--quick)   # the default sizes: each figure must fit its share, not the link
elif [ "$mode" = plan ]; then
  bad=$pre$(( (hosts + 1) / 2 + 1 ))
  link=${pre}2,${pre}3
  "$rig" throttle "$bad" 100mbit
  "$rig" throttle-link "${pre}2" "${pre}3" 200mbit
  sizes=(--quick)
  extra=(--scopes "node,rail,plan")
elif [ "$mode" = link ]; then
  bad=${pre}2,${pre}3
  "$rig" throttle-link "${pre}2" "${pre}3" 10mbit
  extra=(--pairs ring)   # the ring of pairs (large clusters) passes the slow link too
elif [ "$mode" = simslow ] || [ "$mode" = plansim ]; then
  h=$(( (hosts + 1) / 2 + 1 ))
  bad=$pre$h
  # The host's second rank (2 slots per host, filled in order): slow x4 in its worker.
  export DLCOMM_INJECT="slow:$(( (h - 1) * 2 + 1 )):*:4"
fi
start=$(date +%s.%N)
set +e
# A hang is a failure with a message, not a ctest timeout.
mpi_extra=()
if [ "$mode" = simslow ]; then mpi_extra=(-x DLCOMM_INJECT); extra=(--backend sim); fi
if [ "$mode" = plansim ]; then mpi_extra=(-x DLCOMM_INJECT); extra=(--backend sim --scopes plan); fi
timeout 70 "$rig" mpirun "${mpi_extra[@]}" -np $((hosts * 2)) "$bin" preflight "${sizes[@]}" \
  --timeout 50 "${extra[@]}" --json "$work/pf.json" --html "$work/pf.html" > "$work/out.txt" 2>&1
rc=$?
set -e
end=$(date +%s.%N)
grep -v setpgid "$work/out.txt" || true
# Open MPI sometimes leaves a rig job hanging after every rank has exited
# (the ranks are zombies under their orted). preflight itself finished when
# rank 0 wrote the verdict; its own clock (elapsed_s) then judges the time.
if [ "$rc" -eq 124 ] && grep -q '^VERDICT ' "$work/out.txt" && [ -s "$work/pf.json" ]; then
  echo "mpirun did not exit after the verdict (Open MPI teardown in the rig); judging the verdict"
  rc=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["exit_code"])' "$work/pf.json")
  end=$(python3 -c 'import json,sys; print(float(sys.argv[2]) + json.load(open(sys.argv[1]))["elapsed_s"])' "$work/pf.json" "$start")
fi
python3 - "$work/pf.json" "$rc" "$mode" "$bad" "$start" "$end" "$pre" "$link" <<'PY'
import json, sys
path, rc, mode, bad, start, end, pre, link = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5]), float(sys.argv[6]), sys.argv[7], sys.argv[8]
d = json.load(open(path))
v = d["verdict"]
took = end - start
print(f"preflight took {took:.1f} s (elapsed_s {d.get('elapsed_s', -1):.1f}), exit {rc}, "
      f"verdict {v['status']} hosts {v['hosts']} pairs {v['pairs']}")
limit = 90 if mode == "plan" else 60  # a hang guard, not a timing test
assert took < limit, f"preflight took {took:.1f} s (limit {limit})"
assert d["exit_code"] == rc or rc != 0, (d["exit_code"], rc)
if mode == "healthy":
    assert rc == 0, f"healthy rig: exit {rc}"
    assert v["status"] in ("pass", "warn"), v
    assert v["hosts"] == [] and v["pairs"] == [] and v["rails"] == [], v
elif mode == "plan":
    assert rc == 1, f"two faults: exit {rc}, expected 1"
    assert v["status"] == "fail", v
    assert v["hosts"] == [bad], f"verdict names hosts {v['hosts']}, expected exactly [{bad}]"
    assert v["pairs"] == [link.split(",")], f"verdict names pairs {v['pairs']}, expected [{link}]"
    assert v["rails"] == [] and v["gpus"] == [] and v["ranks"] == [], v
    fails = sorted((c["scope"], c["subject"]) for c in d["checks"] if c["status"] == "fail")
    assert fails == sorted([("plan", bad), ("plan", link.replace(",", "-"))]), fails
    sus = {s["subject"] for s in d["suspects"] if s["confirmed"]}
    assert sus == {bad, link.replace(",", "-")}, sus
    plan = d["scopes"]["plan"]
    assert "pair" not in d["scopes"] and plan["rounds"] > 0, d["scopes"].keys()
elif mode == "plansim":
    assert rc == 1 and v["hosts"] == [bad] and v["pairs"] == [] and v["rails"] == [], (rc, v)
    fails = [(c["scope"], c["subject"]) for c in d["checks"] if c["status"] == "fail"]
    assert fails == [("plan", bad)], fails
    assert d["backend"]["name"] == "sim" and d["backend"]["workers"], d["backend"]
elif mode == "link":
    assert rc == 1, f"slow link: exit {rc}, expected 1"
    assert v["hosts"] == [] and v["pairs"] == [bad.split(",")], v
else:
    assert rc == 1, f"throttled rig: exit {rc}, expected 1"
    assert v["status"] == "fail", v
    assert v["hosts"] == [bad], f"verdict names {v['hosts']}, expected exactly [{bad}]"
    sus = [s for s in d["suspects"] if s["confirmed"]]
    if mode == "simslow":  # a slow rank is slow in its node and in its pairs alike
        assert {s["subject"] for s in sus} == {bad}, sus
        assert d["backend"]["name"] == "sim" and d["backend"]["workers"], d["backend"]
    else:
        assert [s["subject"] for s in sus] == [bad], sus
    assert all(s["retest"].get("peer", "") != bad for s in sus), sus
# The pair matrix and its heat map: a slow link is its cell and the mirror, a
# slow host its row and column (the pairs measured), nothing else is slow.
m = d["scopes"]["plan" if mode.startswith("plan") else "pair"]["matrix"]
n = len(m["hosts"])
slow = {(m["hosts"][i], m["hosts"][j]) for i in range(n) for j in range(n) if m["slow"][i][j]}
measured = {(m["hosts"][i], m["hosts"][j]) for i in range(n) for j in range(n)
            if m["busbw_gbps"][i][j] is not None}
if mode == "link":
    a, b = bad.split(",")
    assert slow == {(a, b), (b, a)}, f"slow cells {slow}"
elif mode == "plan":
    a, b = link.split(",")
    assert slow == {c for c in measured if bad in c} | {(a, b), (b, a)}, f"slow cells {slow}"
elif mode in ("throttled", "quick100", "plansim"):
    assert slow == {c for c in measured if bad in c}, f"slow cells {slow}, host {bad}"
elif mode == "healthy":
    assert not slow, f"slow cells {slow}"
page = open(path[:-len(".json")] + ".html").read()
assert page.count('class="cell slow"') == len(slow) and 'class="heatmap"' in page, "heat map"
hosts = [h["host"] for h in d["scopes"]["world"]["host_ranks"]]
assert len(hosts) == len(set(hosts)) and all(h.startswith(pre) for h in hosts), hosts
PY
