#!/bin/bash
# Every multi-rank NCCL path, run on a GPU host with 2, 4 and 8 ranks, each
# outcome checked (not just printed). Where the host has fewer GPUs than
# ranks, each rank is its own NCCL host (DLCOMM_SHARED_GPU=1) and the
# figures are NCCL's code paths over loopback sockets on one GPU; on a host
# with a GPU per rank the same script runs as it is. Run from the
# repository root after scripts/gpu-host-build.sh:
#   OUT=/tmp/out PARTS="sweep profiles groups stragglers" scripts/gpu-multirank.sh
#   OUT=/tmp/out PARTS="preflight signals tune choice" scripts/gpu-multirank.sh
# Parts: sweep (10 collectives x every dtype and op, 2/4/8 ranks), profiles
# (8 in one launch, 4 ranks), groups (--split MOD:2 and DIV:2, -R 1, -R 2,
# -G 10), stragglers (slow:R, 2/4/8 ranks), preflight (4 hosts: healthy,
# slow, corrupt, hung), signals (a worker killed, launch stopped), tune
# (ResNet-50 DDP, GPT-2 Horovod, a curve), choice (one rank, the choice
# read and not read, five interleaved rounds). $OUT/summary.txt has one PASS/FAIL line
# a case; $OUT/multirank.tgz the runs; exit 1 when a case failed.
set -u
OUT=${OUT:?set OUT to the output folder}
BUILD=${BUILD:-build-gpu}
BIN=$(cd "$(dirname "$BUILD/dlcomm")" && pwd)/dlcomm
RANKS=${RANKS:-"2 4 8"}
PARTS=${PARTS:-"sweep profiles groups stragglers preflight signals tune choice"}
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0 DLCOMM_INJECT="" DLCOMM_NCCL_CHOICE=${DLCOMM_NCCL_CHOICE:-1}
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
W=$OUT/mr
mkdir -p "$W"
root=""
[ "$(id -u)" -ne 0 ] || root="--allow-run-as-root"

# mpi N ARGS: N ranks of dlcomm; shared-GPU mode where N exceeds the GPUs.
mpi() {
  local n=$1
  shift
  if [ "$n" -gt "$GPUS" ]; then export DLCOMM_SHARED_GPU=1; else export DLCOMM_SHARED_GPU=0; fi
  mpirun $root --oversubscribe -np "$n" -x NCCL_NVLS_ENABLE -x DLCOMM_SHARED_GPU -x DLCOMM_INJECT \
    -x DLCOMM_NCCL_CHOICE "$BIN" "$@"
}
# case NAME LIMIT COMMAND...: output, exit code and seconds under $W.
case_() {
  local name=$1 limit=$2 t0
  shift 2
  t0=$(date +%s.%N)
  timeout "$limit" bash -c '"$@"' _ "$@" >"$W/$name.out" 2>"$W/$name.err"
  echo $? >"$W/$name.rc"
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f\n", b - a }' >"$W/$name.time"
}
export -f mpi case_ 2>/dev/null
export BIN GPUS W root

for part in $PARTS; do
  case $part in
  sweep)
    for n in $RANKS; do
      sizes="-b 8 -e 64K -f 8192 -n 3 -w 1"
      # 8 ranks over loopback sockets take about 0.1 s a call: one size
      [ "$n" -ge 8 ] && [ "$n" -gt "$GPUS" ] && sizes="-b 64 -e 64 -n 2 -w 0"
      case_ sweep-$n 400 mpi "$n" sweep --backend nccl -c all -d all -o all $sizes -q --out "$W/sweep-$n"
    done ;;
  profiles)
    # NCCL has no Tree all-gather: the tree profile leaves it out and runs its all-reduce
    case_ profiles-4 300 mpi 4 sweep --backend nccl -c allreduce,allgather -b 8 -e 4M -f 32 \
      -n 5 -w 1 -q -p default,ring,tree,ll,ll128,simple,socket,p2p-off --out "$W/profiles-4" ;;
  groups)
    for g in "split-mod2 --split MOD:2" "split-div2 --split DIV:2" "reg1 -R 1" "reg2 -R 2" "graph10 -G 10"; do
      set -- $g
      name=$1
      shift
      case_ "$name-4" 120 mpi 4 sweep --backend nccl -c allreduce,allgather \
        -b 8 -e 256K -f 32 -n 5 -w 1 -q "$@" --out "$W/$name-4"
    done ;;
  stragglers)
    for n in $RANKS; do
      r=$((n / 2))
      DLCOMM_INJECT="slow:$r:*:4" case_ slow-$n-r$r 300 mpi "$n" sweep --backend nccl -c allreduce \
        -b 8 -e 64K -f 8 -q --budget 0.2 --out "$W/slow-$n-r$r"
    done ;;
  preflight)
    case_ pf-healthy 120 mpi 4 preflight --backend nccl --quick --json "$W/pf-healthy.json"
    DLCOMM_INJECT="slow:2:*:4" case_ pf-slow 120 mpi 4 preflight --backend nccl --quick --json "$W/pf-slow.json"
    DLCOMM_INJECT="corrupt:1" case_ pf-corrupt 120 mpi 4 preflight --backend nccl --quick --json "$W/pf-corrupt.json"
    DLCOMM_INJECT="hang:3" case_ pf-hang 120 mpi 4 preflight --backend nccl --quick --timeout 20 --json "$W/pf-hang.json" ;;
  signals)
    bash "$here/gpu-multirank-signals.sh" ;;
  tune)
    case_ curve-4 240 mpi 4 sweep --backend nccl -c allreduce -b 64K -e 256M -f 4 -q --budget 0.5 --out "$W/curve-4"
    case_ tune-resnet50-4 300 mpi 4 tune --model resnet50 --framework ddp --backend nccl \
      --bucket-caps 1,25,100 --min-iters 3 --curve "$W/curve-4/run.json" --out "$W/tune-resnet50-4" --json "$W/tune-resnet50-4.json"
    case_ tune-gpt2-4 300 mpi 4 tune --model gpt2 --framework horovod --backend nccl \
      --fusion-thresholds 1,64 --cycle-times 1 --min-iters 3 --curve "$W/curve-4/run.json" --out "$W/tune-gpt2-4" --json "$W/tune-gpt2-4.json" ;;
  choice)
    for round in 1 2 3 4 5; do
      for mode in on off; do
        v=1
        [ $mode = off ] && v=0
        DLCOMM_NCCL_CHOICE=$v case_ choice-$mode-$round 120 mpi 1 sweep --backend nccl -c allreduce \
          -b 8 -e 1G -f 4 --placement out -q --out "$W/choice-$mode-$round"
      done
    done ;;
  esac
done
python3 "$here/gpu-multirank-check.py" "$W" "$GPUS" | tee "$OUT/summary.txt"
rc=${PIPESTATUS[0]}
find "$W" -name workers -type d -prune -exec rm -rf {} +
tar -C "$OUT" -czf "$OUT/multirank.tgz" mr && rm -rf "$W"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader >"$OUT/after.txt" 2>&1
pgrep -a dlcomm >>"$OUT/after.txt"
exit "$rc"
