#!/bin/bash
# The signal cases of scripts/gpu-multirank.sh on 4 NCCL ranks (its
# functions and $W come from there): one rank's worker killed mid-profile
# (that profile crashed, the next one runs, exit 3), and dlcomm launch
# stopped by SIGTERM (exit 3, the finished rows kept).
set -u
# sig-kill: SIGKILL to rank 1's worker of the first profile.
(DLCOMM_INJECT="" case_ sig-kill 180 mpi 4 sweep --backend nccl -c allreduce -b 8 -e 256M -f 2 \
  --budget 0.3 -q -p default,ring --out "$W/sig-kill") &
bg=$!
pid=""
for _ in $(seq 1 120); do # run.json is written when a profile ends: wait for the worker alone
  pid=$(pgrep -f "__worker .*/sig-kill default 1\$" | head -1) # $W may hold regex characters
  [ -n "$pid" ] && break
  sleep 0.5
done
sleep 4 # past NCCL's init over sockets (1-2 s), inside the profile's sizes (about 30 s)
[ -n "$pid" ] && kill -KILL "$pid"
echo "${pid:-none}" >"$W/sig-kill.killed"
wait $bg

# sig-launch: SIGTERM to dlcomm launch while the sweep runs.
if [ 4 -gt "$GPUS" ]; then export DLCOMM_SHARED_GPU=1; fi
t0=$(date +%s.%N)
"$BIN" launch mpirun $root --oversubscribe -np 4 -x NCCL_NVLS_ENABLE -x DLCOMM_SHARED_GPU \
  "$BIN" sweep --backend nccl -c broadcast,allreduce,allgather,reducescatter -b 8 -e 256M -f 2 \
  --budget 0.5 -q --out "$W/sig-launch" \
  >"$W/sig-launch.out" 2>"$W/sig-launch.err" &
lp=$!
for _ in $(seq 1 120); do # run.json is written whole after each collective
  [ -s "$W/sig-launch/run.json" ] && break
  sleep 0.2
done
sleep 0.5 # inside the second of four collectives (the first, over sockets, takes seconds)
kill -TERM "$lp"
wait "$lp"
echo $? >"$W/sig-launch.rc"
awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f\n", b - a }' >"$W/sig-launch.time"
sleep 2
{ nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader; pgrep -a -f "dlcomm (sweep|__worker)"; } \
  >"$W/sig-after.txt" 2>&1
