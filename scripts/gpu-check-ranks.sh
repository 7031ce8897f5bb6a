#!/bin/sh
# More ranks than GPUs, on the GPU host (after scripts/gpu-host-build.sh):
# `mpirun -np 8 dlcomm sweep` (auto), the same with --backend nccl, and
# preflight must each exit 2 within a few seconds with one dlcomm line on
# stderr ("8 ranks on HOST share 1 GPU: ...", beside mpirun's own banner)
# and create no results folder; a
# 1-rank sweep still runs. Also records `dlcomm version`.
# Writes $OUT/ranks-check.txt; exit 1 when a check fails. About 20 s.
set -u
OUT=${OUT:-/tmp/dlcomm-ranks}
BUILD=${BUILD:-build-gpu}
BIN=$(cd "$(dirname "$BUILD/dlcomm")" && pwd)/dlcomm
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT"
LOG=$OUT/ranks-check.txt
W=$(mktemp -d /tmp/dlcomm-ranks.XXXXXX) # an empty working folder: results/ would appear here
NP=${NP:-8}
fails=0
{
  echo "== dlcomm version"
  "$BIN" version
  echo "== GPUs: $(nvidia-smi -L 2>/dev/null | wc -l)"
  for what in "sweep -b 8 -e 1K" "sweep --backend nccl -b 8 -e 1K" "preflight --quick"; do
    echo "== mpirun -np $NP dlcomm $what"
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086 # $what is several words on purpose
    (cd "$W" && mpirun --allow-run-as-root --oversubscribe -np "$NP" "$BIN" $what >"$W/out" 2>"$W/err")
    rc=$?
    t1=$(date +%s.%N)
    awk -v rc="$rc" -v a="$t0" -v b="$t1" 'BEGIN { printf "exit %d after %.2f s\n", rc, b - a }' 
    echo "stderr ($(wc -l <"$W/err") lines):"; cat "$W/err"
    echo "stdout ($(wc -l <"$W/out") lines)"
    [ "$rc" -eq 2 ] || { echo "FAIL: exit $rc, not 2"; fails=$((fails + 1)); }
    grep -Eq "^.*[0-9]+ ranks on .* share [0-9]+ GPUs?: NCCL needs one GPU per rank" "$W/err" ||
      { echo "FAIL: the line is missing"; fails=$((fails + 1)); }
    # mpirun adds its own banner about ranks that exited non-zero; dlcomm's
    # own lines start with "dlcomm:".
    [ "$(grep -c '^dlcomm' "$W/err")" -eq 1 ] || { echo "FAIL: not exactly one dlcomm line on stderr"; fails=$((fails + 1)); }
    [ ! -e "$W/results" ] || { echo "FAIL: a results folder was created: $(ls "$W/results")"; fails=$((fails + 1)); }
    rm -rf "$W/results" "$W/out" "$W/err"
  done
  echo "== mpirun -np 1 dlcomm sweep (one rank per GPU still runs)"
  (cd "$W" && mpirun --allow-run-as-root -np 1 "$BIN" sweep -b 8 -e 1K -q --out "$W/one" 2>&1 | tail -n 3)
  rc=$?
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('versions', json.dumps(r['versions']))" \
    "$W/one/run.json" || { echo "FAIL: -np 1 wrote no run.json with versions"; fails=$((fails + 1)); }
  echo "== $fails failed check(s)"
} >"$LOG" 2>&1
rm -rf "$W"
cat "$LOG"
[ "$fails" -eq 0 ]
