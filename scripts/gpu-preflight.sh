#!/bin/sh
# preflight on a GPU host, and its copy checks alone: run from the repository
# root after scripts/gpu-host-build.sh. Writes under $OUT (default
# /tmp/dlcomm-gpu-preflight), at most 7 files, in well under 60 s:
#   preflight.json, preflight.out   mpirun -np 1 dlcomm preflight --quick
#   gpu-copy-nvml.json              every GPU's copies, judged by NVML's PCIe link
#   gpu-copy-h200.json              the same, judged by topologies/systems/h200-sxm-8.json
#   gpu-copy-far.json               bound to another NUMA node than GPU 0 (hosts with several)
#   gpu-copy.out                    the check lines of the three runs above
#   rc.txt                          each step's exit code and wall time
set -u
OUT=${OUT:-/tmp/dlcomm-gpu-preflight}
BUILD=${BUILD:-build-gpu}
BIN=$BUILD/dlcomm
CHECK=$BUILD/tests/gpu_copy_check
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0
root=""
[ "$(id -u)" -ne 0 ] || root="--allow-run-as-root"
mkdir -p "$OUT"
: >"$OUT/rc.txt"

step() { # name, then the command (bounded); exit code and wall time to rc.txt
  name=$1; shift
  t0=$(date +%s.%N)
  timeout 30 "$@"
  rc=$?
  t1=$(date +%s.%N)
  echo "$name rc=$rc wall_s=$(echo "$t0 $t1" | awk '{printf "%.2f", $2-$1}')" >>"$OUT/rc.txt"
}

step preflight mpirun $root -np 1 "$BIN" preflight --quick --json "$OUT/preflight.json" \
  >"$OUT/preflight.out" 2>&1
{
  echo "== judged by NVML's PCIe generation x width"
  step copy-nvml "$CHECK" - "$OUT/gpu-copy-nvml.json" 2>&1
  echo "== judged by the h200-sxm-8 system description"
  step copy-h200 "$CHECK" topologies/systems/h200-sxm-8.json "$OUT/gpu-copy-h200.json" 2>&1
  # The far socket: bound to the CPUs of a NUMA node other than GPU 0's,
  # the pinned buffer follows the binding and H2D/D2H show what it costs.
  bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i 0 2>/dev/null | tail -c 13 | tr 'A-F' 'a-f')
  near=$(cat "/sys/bus/pci/devices/$bus/numa_node" 2>/dev/null || echo -1)
  far=""
  for n in /sys/devices/system/node/node[0-9]*; do
    id=${n##*node}
    [ "$id" != "$near" ] && [ -s "$n/cpulist" ] && { far=$id; break; }
  done
  if [ -n "$far" ] && [ "$near" != "-1" ]; then
    echo "== bound to NUMA node $far (GPU 0 is on node $near)"
    step copy-far taskset -c "$(cat /sys/devices/system/node/node$far/cpulist)" \
      "$CHECK" - "$OUT/gpu-copy-far.json" 2>&1
  else
    echo "== one NUMA node with CPUs (GPU 0 on node $near): no far-socket run"
  fi
} >"$OUT/gpu-copy.out"
cat "$OUT/rc.txt"
grep -E '^(PASS|WARN|FAIL|SKIP) (gpu-copy|h2d|d2h|numa|gpu-health)|^VERDICT' "$OUT/preflight.out"
cat "$OUT/gpu-copy.out"
