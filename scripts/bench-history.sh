#!/bin/sh
# Measures dlcomm history over 1,000 run folders made from one real run:
# each a copy of RUN.json with its start moved a day on and, every 100 runs,
# another NCCL version (so version marks are drawn too). Prints the median
# wall time of 5 runs of `history DIR` and of `history DIR --html FILE`.
# usage: scripts/bench-history.sh [RUN.json] [DLCOMM]
set -eu
RUN=${1:-results/reference/h200-1gpu/sweep-1/run.json}
BIN=${2:-build/dlcomm}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
python3 - "$RUN" "$DIR" <<'PY'
import datetime, json, os, sys
src, out = sys.argv[1:3]
doc = json.load(open(src))
t0 = datetime.datetime(2026, 1, 1)
for i in range(1000):
    doc["started"] = (t0 + datetime.timedelta(hours=8 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for p in doc["profiles"]:
        ot = p.setdefault("observed_transports", {})
        ot["nccl_version"] = "2.%d.3" % (20 + i // 100)
    d = os.path.join(out, "run-%04d" % i)
    os.makedirs(d)
    with open(os.path.join(d, "run.json"), "w") as f:
        json.dump(doc, f)
PY
med() { sort -n | sed -n 3p; }
t() { s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); echo "$e - $s" | bc; }
size=$(du -sh "$DIR" | cut -f1)
text=$(for i in 1 2 3 4 5; do t "$BIN" history "$DIR"; done | med)
html=$(for i in 1 2 3 4 5; do t "$BIN" history "$DIR" --html "$DIR/h.html"; done | med)
echo "1000 runs ($size, from $RUN): history median ${text} s; with --html ${html} s ($(du -h "$DIR/h.html" | cut -f1) page)"
