#!/bin/bash
# Wall time of `dlcomm preflight` on the netns rig, healthy and with one host's
# link limited, for results/reference/preflight-time.md.
#   preflight-time.sh DLCOMM HOSTS RATE [preflight options...]   (root)
# Prints one line per case: hosts, case, exit code, wall and preflight's own
# elapsed_s, verdict and the hosts it names. DLRIG_PREFIX/DLRIG_NET as for
# netns-rig.sh (defaults here: pbt, 10.213.87). DLPF_LINK=A:B:RATE also limits
# the link between hosts A and B (numbers) in the faulty case: two faults at once.
set -euo pipefail
bin=$1 hosts=$2 rate=$3
shift 3
export DLRIG_PREFIX=${DLRIG_PREFIX:-pbt} DLRIG_NET=${DLRIG_NET:-10.213.87}
rig=$(cd "$(dirname "$0")" && pwd)/netns-rig.sh
work=$(mktemp -d)
trap '"$rig" down >/dev/null 2>&1; rm -rf "$work"' EXIT
"$rig" up "$hosts" >/dev/null
bad=$DLRIG_PREFIX$(( (hosts + 1) / 2 + 1 ))
one() {
  local start end rc=0
  start=$(date +%s.%N)
  timeout 600 "$rig" mpirun -np $((hosts * 2)) "$bin" preflight "$@" --json "$work/pf.json" \
    > "$work/out.txt" 2>&1 || rc=$?
  end=$(date +%s.%N)
  python3 - "$work/pf.json" "$hosts" "$case" "$rc" "$start" "$end" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = d["verdict"]
print(f"hosts={sys.argv[2]} case={sys.argv[3]} exit={sys.argv[4]} "
      f"wall={float(sys.argv[6]) - float(sys.argv[5]):.1f}s elapsed_s={d['elapsed_s']:.1f} "
      f"verdict={v['status']} named={v.get('hosts')} pairs={v.get('pairs')}")
PY
  grep -E '^(FAIL|WARN) ' "$work/out.txt" || true
}
case=healthy one "$@"
"$rig" throttle "$bad" "$rate"
case="$bad@$rate"
if [ -n "${DLPF_LINK:-}" ]; then
  IFS=: read -r la lb lrate <<< "$DLPF_LINK"
  "$rig" throttle-link "$DLRIG_PREFIX$la" "$DLRIG_PREFIX$lb" "$lrate"
  case="$case,$DLRIG_PREFIX$la-$DLRIG_PREFIX$lb@$lrate"
fi
one "$@"
