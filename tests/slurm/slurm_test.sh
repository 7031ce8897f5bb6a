#!/bin/bash
# dlcomm under a real Slurm (scripts/slurm-rig.sh: munged, slurmctld and one
# slurmd per netns rig host), each mode on a cluster of its own:
#   slurm_test.sh MODE DLCOMM
# sbatch   3 nodes: `sbatch -N3 scripts/sbatch-sweep.sh` (CPU ranks, mpi
#          backend, a short sweep): its preflight gate passes, run.json lands
#          in results/DATE-slurm-JOBID under the submit folder with results,
#          and sacct (from the jobcomp file: no slurmdbd) says COMPLETED;
#          mpirun inside the allocation places its ranks by node; a job run
#          through dlcomm launch srun, stopped by scancel -s TERM -b, ends
#          with exit code 3 and a run.json recorded as interrupted.
# drain    4 nodes, PrologSlurmctld=scripts/slurm-prolog.sh, the second node's
#          link at 100 Mbit/s (tc tbf): a 3-node job's prolog drains exactly
#          that node with dlcomm's reason, the job is requeued and COMPLETED
#          on the three others, and no other node is drained.
# broken   3 nodes, the prolog's preflight stopped by DLCOMM_PROLOG_TIMEOUT,
#          then with a dlcomm that is not there: nothing drained, prolog.log
#          says so, each job runs to COMPLETED without a requeue.
# healthy  3 nodes, the prolog passes: every node idle after the job, the job
#          COMPLETED without a requeue.
# Exit 77 (skip) without root, network namespaces or the Slurm packages.
# DLRIG_PREFIX, DLRIG_NET and DLSLURM_PORT choose the cluster's names, subnet
# and ports (defaults differ per mode).
set -euo pipefail
mode=$1 bin=$2
here=$(cd "$(dirname "$0")" && pwd)
scripts=$(cd "$here/../../scripts" && pwd)
rig=$scripts/slurm-rig.sh
case $mode in
  sbatch) p=dlsa n=85 port=19300 ;;
  drain) p=dlsb n=86 port=19302 ;;
  broken) p=dlsc n=88 port=19304 ;;
  healthy) p=dlsd n=89 port=19306 ;;
  *) echo "usage: slurm_test.sh sbatch|drain|broken|healthy DLCOMM" >&2; exit 2 ;;
esac
export DLRIG_PREFIX=${DLRIG_PREFIX:-$p} DLRIG_NET=${DLRIG_NET:-10.213.$n} DLSLURM_PORT=${DLSLURM_PORT:-$port}
pre=$DLRIG_PREFIX
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the Slurm rig needs root (network namespaces, slurmd as root)"; exit 77
fi
if ! why=$("$rig" check 2>&1); then
  echo "SKIP: $why"; exit 77
fi
# Each node has a /tmp of its own (the PMIx plugin needs it): a dlcomm or a
# source tree under /tmp is not there for the sbatch jobs' tasks (the
# prologs run through the netns rig, which sees the host's /tmp).
for p in "$(realpath "$bin")" "$here"; do
  if [ "$mode" = sbatch ] && [[ $p == /tmp/* ]]; then
    echo "SKIP: $p is under /tmp, which each rig node has its own of: build outside /tmp"; exit 77
  fi
done

state=$("$rig" state)
diagnose() {
  echo "--- diagnostics"
  sinfo -N -o '%N %T %E' 2>/dev/null || true
  scontrol show job 2>/dev/null | grep -E 'JobId|JobState|NodeList=|Restarts|Reason' || true
  for f in "$state"/slurmctld.log "$state"/slurmd-"$pre"1.log "$state"/log/prolog.log "$state"/work/*.out; do
    [ -f "$f" ] && { echo "--- $f"; tail -n 25 "$f"; }
  done
  for f in "$state"/log/preflight-*.log; do
    [ -f "$f" ] && { echo "--- $f (all but PASS and SKIP)"; grep -v '^PASS \|^SKIP ' "$f" | tail -n 25; }
  done
  return 0
}
# shellcheck disable=SC2154 # rc is the trap's own
trap 'rc=$?; if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then diagnose; fi; "$rig" down; exit "$rc"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The value of FIELD in `scontrol show job|node -o`.
field() { tr ' ' '\n' <<< "$1" | sed -n "s/^$2=//p" | head -1; }
# Waits up to LIMIT seconds for job ID to end; prints its final state.
wait_job() {
  local id=$1 limit=$2 t0=$SECONDS st
  while :; do
    st=$(field "$(scontrol show job -o "$id")" JobState)
    case $st in
      COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|BOOT_FAIL|OUT_OF_MEMORY|DEADLINE) echo "$st"; return 0 ;;
    esac
    [ $((SECONDS - t0)) -lt "$limit" ] || { echo "job $id still $st after $limit s" >&2; return 1; }
    sleep 0.5
  done
}
# The job's line in the jobcomp file, through sacct: State|NodeList|ExitCode.
jobcomp() { sacct -c -n -P -j "$1" -o State,NodeList,ExitCode; }
# Exactly the nodes given are drained, with dlcomm's reason; the others idle.
nodes_drained() {
  local node st want line
  for ((i = 1; i <= hosts; i++)); do
    node=$pre$i
    line=$(scontrol show node -o "$node")
    st=$(field "$line" State)
    want=idle
    [[ " $* " == *" $node "* ]] && want=drain
    if [ "$want" = drain ]; then
      [[ $st == *DRAIN* ]] || fail "$node is $st, expected DRAIN"
      [[ $line == *"Reason=dlcomm preflight failed (job "* ]] || fail "$node: not dlcomm's reason: $line"
    else
      [ "$st" = IDLE ] || fail "$node is $st, expected IDLE (not drained)"
    fi
    echo "$node: $st $(sed -n 's/.*\(Reason=.*\)/\1/p' <<< "$line")"
  done
}
# The prolog's settings (slurm-rig.sh points the prolog at this file).
prolog_conf() {
  {
    echo "DLCOMM_BIN=$bin"
    echo "DLCOMM_MPIRUN=$("$rig" mpirun-wrapper)"
    echo "DLCOMM_RANKS_PER_NODE=2"
    echo "DLCOMM_PREFLIGHT_ARGS=$pf_args"
    echo "DLCOMM_PREFLIGHT_DIR=$state/log"
    printf '%s\n' "$@"
  } > "$state/prolog.conf"
}

# Preflight as the prolog and the gate run it. The rig's hosts share 2 cores
# with whatever else runs: with the default --min-fraction (0.9) a healthy
# host was named once in a full `ctest -j2`, and a healthy pair in 1 of 6
# runs beside a busy loop; with 0.3, none in 8 such runs, and a host at
# 100 Mbit/s (about a fiftieth of the others) is still named.
pf_args="--quick --timeout 60 --min-fraction 0.3"
hosts=3
[ "$mode" = drain ] && hosts=4
if [ "$mode" != sbatch ]; then export DLSLURM_PROLOG=$scripts/slurm-prolog.sh; fi
t0=$SECONDS
"$rig" up "$hosts"
echo "cluster up in $((SECONDS - t0)) s"
eval "$("$rig" env)"
# Job folders must be seen by every node (each has a /tmp of its own).
work=$state/work
mkdir -p "$work"
# Open MPI between the rig's hosts: TCP on the bridge, shared memory inside
# a host, ranks yielding their core (several hosts share 2 cores). sbatch
# passes these to the job.
export OMPI_MCA_btl=tcp,vader,self OMPI_MCA_btl_tcp_if_include=$DLRIG_NET.0/24 \
  OMPI_MCA_oob_tcp_if_include=$DLRIG_NET.0/24 OMPI_MCA_mpi_yield_when_idle=1

# A small job on 3 nodes that records where its tasks ran.
submit_small() {
  sbatch --parsable -N3 --requeue --chdir="$work" -o "$work/job-%j.out" \
    --wrap "srun -N3 hostname | sort > $work/ran-\$SLURM_JOB_ID.txt"
}

case $mode in
sbatch)
  export DLCOMM_BIN=$bin DLCOMM_PREFLIGHT_ARGS="$pf_args" \
    DLCOMM_SWEEP_ARGS="--backend mpi -c allreduce,allgather -b 1K -e 64K -f 4 --timeout 60"
  id=$(sbatch --parsable -N3 --ntasks-per-node=2 --cpus-per-task=1 --gpus-per-node=0 \
         --chdir="$work" -o "$work/job-%j.out" "$scripts/sbatch-sweep.sh")
  echo "submitted job $id"
  st=$(wait_job "$id" 90)
  cat "$work/job-$id.out"
  [ "$st" = COMPLETED ] || fail "job $id ended $st"
  out=$(echo "$work"/results/*-slurm-"$id")
  [ -d "$out" ] || fail "no results/*-slurm-$id folder in $work"
  python3 - "$out" "$pre" <<'PY'
import json, re, sys
out, pre = sys.argv[1], sys.argv[2]
assert re.search(r"/results/\d{8}-slurm-\d+$", out), out
pf = json.load(open(out + "-preflight.json"))
assert pf["exit_code"] == 0 and pf["verdict"]["status"] in ("pass", "warn"), pf["verdict"]
hosts = sorted(h["host"] for h in pf["scopes"]["world"]["host_ranks"])
assert hosts == [pre + "1", pre + "2", pre + "3"], hosts
run = json.load(open(out + "/run.json"))
assert run["exit_code"] == 0, run["exit_code"]
fp = run["fingerprint"]
assert fp["ranks"] == 6 and fp["nodes"] == 3, fp
rows = [r for p in run["profiles"] for r in p["results"]]
colls = {r["collective"] for r in rows}
assert colls == {"allreduce", "allgather"}, colls
assert all(r["busbw_gbps"] > 0 and r["wrong"] == 0 for r in rows), rows[:2]
print(f"gate {pf['verdict']['status']} on {hosts}; run.json: {len(rows)} rows, ranks {fp['ranks']} on {fp['nodes']} nodes")
PY
  # The other way Open MPI starts inside a job: mpirun in the batch script
  # takes the allocation from SLURM_* and starts its daemons through srun.
  root=()
  [ "$(id -u)" -ne 0 ] || root=(--allow-run-as-root)
  id2=$(sbatch --parsable -N3 --ntasks-per-node=2 --chdir="$work" -o "$work/job-%j.out" \
          --wrap "mpirun ${root[*]} $bin sweep --backend mpi -c allreduce -b 1K -e 16K -f 4 --timeout 60 --out $work/mpirun")
  echo "submitted job $id2 (mpirun inside the allocation)"
  st=$(wait_job "$id2" 60)
  grep -v '^ ' "$work/job-$id2.out"
  [ "$st" = COMPLETED ] || fail "job $id2 ended $st"
  python3 - "$work/mpirun/run.json" "$pre" <<'PY'
import json, sys
fp = json.load(open(sys.argv[1]))["fingerprint"]
hosts = {h["name"]: h["ranks"] for h in fp["hosts"]}
p = sys.argv[2]
assert hosts == {p + "1": [0, 1], p + "2": [2, 3], p + "3": [4, 5]}, hosts
print(f"mpirun inside the job: ranks by host {hosts}")
PY
  # A job stopped: `scancel -s TERM -b` signals the batch step's processes,
  # dlcomm launch (exec'd by the script) passes it on to srun as SIGUSR2,
  # which srun gives every task (srun itself, sent SIGTERM, would kill the
  # step at once): the ranks record the run, and the job's exit code is 3.
  printf '#!/bin/bash\nexec %s launch srun --mpi=pmix %s sweep --backend mpi -c allreduce,allgather -b 8 -e 128 --budget 0.5 --ci-target 0 --max-iters 2000000000 -w 0 --timeout 60 --out %s\n' \
    "$bin" "$bin" "$work/stopped" > "$work/stopped.sh"
  chmod +x "$work/stopped.sh"
  id3=$(sbatch --parsable -N3 --ntasks-per-node=1 --chdir="$work" -o "$work/job-%j.out" "$work/stopped.sh")
  echo "submitted job $id3 (to be stopped)"
  for ((i = 0; i < 120; i++)); do
    grep -q '^ *8 ' "$work/job-$id3.out" 2> /dev/null && break
    sleep 0.5
  done
  scancel -s TERM -b "$id3"
  st=$(wait_job "$id3" 60)
  grep -v '^ ' "$work/job-$id3.out" | grep -v '^#' || true
  code=$(field "$(scontrol show job -o "$id3")" ExitCode)
  if [ "$st" != FAILED ] || [ "$code" != 3:0 ]; then
    fail "job $id3 ended $st, exit code $code (want FAILED, 3:0)"
  fi
  python3 - "$work/stopped/run.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
st = [p["status"] for p in run["profiles"]]
rows = sum(len(p["results"]) for p in run["profiles"])
assert run["exit_code"] == 3 and st == ["interrupted"], (run["exit_code"], st)
assert run.get("interrupted_by") == "SIGTERM", run.get("interrupted_by")
assert rows >= 1, rows
print(f"stopped job: exit 3, run.json {st} by {run['interrupted_by']}, {rows} rows kept")
PY
  ;;
healthy)
  prolog_conf
  id=$(submit_small)
  echo "submitted job $id"
  st=$(wait_job "$id" 60)
  [ "$st" = COMPLETED ] || fail "job $id ended $st"
  grep -q "preflight passed on 3 nodes" "$state/log/prolog.log" || fail "prolog.log does not say it passed"
  [ "$(tr '\n' ' ' < "$work/ran-$id.txt")" = "${pre}1 ${pre}2 ${pre}3 " ] || fail "job $id did not run on 3 nodes"
  nodes_drained
  ;;
broken)
  # The whole preflight may take 2 s: it is stopped (it needs about 10).
  prolog_conf "DLCOMM_PROLOG_TIMEOUT=2"
  id=$(submit_small)
  echo "submitted job $id (preflight stopped after 2 s)"
  st=$(wait_job "$id" 60)
  [ "$st" = COMPLETED ] || fail "job $id ended $st"
  line=$(grep "\[$id\]: preflight did not finish within DLCOMM_PROLOG_TIMEOUT=2 s and was stopped; drained nobody" \
    "$state/log/prolog.log") || fail "prolog.log does not say the timeout drained nobody"
  # Stopped means within the limit and the 5 s between SIGTERM and SIGKILL
  # (mpirun takes the SIGKILL: its ranks are inside MPI calls).
  took=$(sed -n 's/.*drained nobody (\([0-9]*\) s).*/\1/p' <<< "$line")
  [ "$took" -le 10 ] || fail "the stopped prolog took $took s (limit 2 s, SIGKILL 5 s later)"
  nodes_drained
  # dlcomm is not where the settings say.
  prolog_conf "DLCOMM_BIN=$state/no-such-dlcomm"
  id2=$(submit_small)
  echo "submitted job $id2 (no dlcomm)"
  st=$(wait_job "$id2" 60)
  [ "$st" = COMPLETED ] || fail "job $id2 ended $st"
  grep -q "\[$id2\]: preflight could not run (exit [0-9]*); drained nobody" "$state/log/prolog.log" \
    || fail "prolog.log does not say the missing dlcomm drained nobody"
  nodes_drained
  for j in "$id" "$id2"; do
    [ "$(field "$(scontrol show job -o "$j")" Restarts)" = 0 ] || fail "job $j was requeued"
  done
  ;;
drain)
  bad=${pre}2
  "$scripts/netns-rig.sh" throttle "$bad" 100mbit
  prolog_conf
  id=$(submit_small)
  echo "submitted job $id ($bad at 100 Mbit/s)"
  st=$(wait_job "$id" 120)
  [ "$st" = COMPLETED ] || fail "job $id ended $st"
  nodes_drained "$bad"
  [ "$(field "$(scontrol show job -o "$id")" Restarts)" = 1 ] || fail "job $id: not requeued exactly once"
  python3 - "$state/log/preflight-$id.json" "$state/log/preflight-$id.1.json" "$bad" "$pre" <<'PY'
import json, sys
first, second, bad, pre = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
ran = lambda d: sorted(h["host"] for h in d["scopes"]["world"]["host_ranks"])
assert ran(first) == [pre + "1", bad, pre + "3"], ran(first)
assert first["exit_code"] == 1 and first["verdict"]["hosts"] == [bad], first["verdict"]
assert ran(second) == [pre + "1", pre + "3", pre + "4"], ran(second)
assert second["exit_code"] == 0, second["verdict"]
print(f"first prolog on {ran(first)} named {first['verdict']['hosts']}; after the requeue {ran(second)} passed")
PY
  if [ "$(grep -c "\[$id\]: draining " "$state/log/prolog.log")" != 1 ] \
     || ! grep -q "\[$id\]: draining $bad (preflight on ${pre}1 $bad ${pre}3," "$state/log/prolog.log" \
     || ! grep -q "\[$id\]: preflight passed on 3 nodes (${pre}1 ${pre}3 ${pre}4)" "$state/log/prolog.log"; then
    fail "prolog.log does not say it drained $bad alone, then passed"
  fi
  ran=$(tr '\n' ' ' < "$work/ran-$id.txt")
  [ "$ran" = "${pre}1 ${pre}3 ${pre}4 " ] || fail "the job ran on '$ran'"
  ;;
esac

if [ "$mode" != sbatch ]; then
  echo "--- prolog.log"
  cat "$state/log/prolog.log"
fi
# Accounting without slurmdbd: sacct reads the jobcomp file (-c), one line
# per run of a job (a requeued run reads PENDING, on the nodes it had).
for j in ${id:-} ${id2:-}; do
  line=$(jobcomp "$j" | tr '\n' ' ')
  echo "sacct -c -j $j: $line"
  if [ "$mode" = drain ]; then
    [ "$line" = "PENDING|${pre}[1-3]|0:0 COMPLETED|${pre}[1,3-4]|0:0 " ] \
      || fail "sacct -c: job $j did not run again and complete on ${pre}[1,3-4]"
  else
    [ "$line" = "COMPLETED|${pre}[1-3]|0:0 " ] || fail "sacct -c: job $j is '$line'"
  fi
done
echo "PASS $mode in $((SECONDS - t0)) s"
