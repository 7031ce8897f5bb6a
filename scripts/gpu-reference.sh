#!/bin/sh
# The one-GPU reference measurements kept in results/reference/h200-1gpu/:
# run on a GPU host from the repository root after scripts/gpu-host-build.sh.
# Writes everything under $OUT (default /tmp/dlcomm-ref) and a packed copy
# ref.tgz, and prints the figures the reference note quotes.
set -u
OUT=${OUT:-/tmp/dlcomm-ref}
BUILD=${BUILD:-build-gpu}
BIN=$BUILD/dlcomm
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0
root=""
[ "$(id -u)" -ne 0 ] || root="--allow-run-as-root"
# Open MPI's default binding of a single rank (one core) is what the
# reference runs use: --bind-to none made the small calls noisier (46 of 180
# rows did not reach the CI target, against none bound). One variant runs
# bound to core 7 instead of core 0, to compare the two cores.
MPI="mpirun $root -np 1"
MPI_CPU7="mpirun $root -np 1 --cpu-set 7 --bind-to core"
R=$OUT/ref
mkdir -p "$R"

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -n 2
  mpirun --version | head -n 1
  uname -r
  $BIN version
  echo "bindings: default, then the core-7 variant:"
  $MPI --report-bindings true 2>&1 | tail -n 1
  $MPI_CPU7 --report-bindings true 2>&1 | tail -n 1
} >"$R/host.txt" 2>&1

timed() { # name, then the command (bounded); wall time in $R/NAME.wall
  name=$1; shift
  t0=$(date +%s.%N)
  timeout 240 "$@" >"$R/$name.out" 2>"$R/$name.err"
  rc=$?
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{printf "%.2f\n", $2-$1}' >"$R/$name.wall"
  echo "$name: rc=$rc wall=$(cat "$R/$name.wall") s"
}

echo "== sweeps (three of each: the host's pace drifts from minute to minute)"
for i in 1 2 3; do
  timed sweep-$i $MPI $BIN sweep --backend nccl -c allreduce,allgather,broadcast -b 8 -e 4G \
    --out "$R/sweep-$i"
  timed sweep-out-$i $MPI $BIN sweep --backend nccl -c allreduce,allgather,broadcast -b 8 -e 4G \
    --placement out --out "$R/sweep-out-$i"
done
timed sweep-ci1 $MPI $BIN sweep --backend nccl -c allreduce,allgather,broadcast -b 8 -e 4G \
  --ci-target 0.01 --out "$R/sweep-ci1"
timed sweep-cpu7 $MPI_CPU7 $BIN sweep --backend nccl -c allreduce,allgather,broadcast -b 8 -e 4G \
  --out "$R/sweep-cpu7"
echo "== a small call taken apart (tests/gpu/nccl_launch_bench.c)"
"$BUILD/tests/nccl_launch_bench" 20 200 >"$R/launch-bench.txt" 2>&1
taskset -c 0 "$BUILD/tests/nccl_launch_bench" 1000 20 >>"$R/launch-bench.txt" 2>&1
cat "$R/launch-bench.txt"
timed profiles $MPI $BIN sweep --backend nccl -p default,p2p-off,ring,ll -b 8 -e 64M \
  --out "$R/profiles"

echo "== injected hang in p2p-off"
nvidia-smi --query-gpu=memory.used --format=csv,noheader >"$R/hang.before"
timed hang env DLCOMM_INJECT=hang:0:p2p-off $MPI $BIN sweep --backend nccl \
  -p default,p2p-off,ring -b 8 -e 16M --timeout 8 --out "$R/hang"
sleep 2
{
  echo "memory.used before: $(cat "$R/hang.before")"
  echo "memory.used after:  $(nvidia-smi --query-gpu=memory.used --format=csv,noheader)"
  echo "compute apps after: $(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | wc -l)"
  echo "dlcomm processes after: $(pgrep -fc 'dlcomm (sweep|__worker)' || true)"
  pgrep -fa 'dlcomm (sweep|__worker)' || true
} >"$R/hang.after"
cat "$R/hang.after"

python3 scripts/gpu-reference-figures.py "$R"
pack() { tar -czf "$OUT/ref.tgz" -C "$OUT" ref; } # what is done so far, should the lease end
pack
timed graph $MPI $BIN sweep --backend nccl -c allreduce,allgather,broadcast -b 8 -e 1M \
  --graph 100 --out "$R/graph"
pack

echo "== selftest"
"$BUILD/tests/nccl_selftest" 67108864 >"$R/selftest.txt" 2>&1
echo "selftest rc=$?"; tail -n 3 "$R/selftest.txt"


echo "== topo and preflight (NVML on a real GPU)"
timed topo $BIN topo
timed preflight $MPI $BIN preflight --quick --json "$R/preflight.json"
tail -n 12 "$R/preflight.out"; cat "$R/topo.out" | head -n 20

python3 scripts/gpu-reference-figures.py "$R" | tee "$R/figures.txt"
pack
