#!/bin/bash
# A real Slurm cluster on the netns rig: munged and slurmctld on this machine
# (slurmctld in its own UTS namespace, hostname ${PREFIX}ctl, bound to the
# rig's bridge address), one slurmd per rig host inside its namespace with
# that host's name as hostname and NodeName. Needs root and slurmctld,
# slurmd, slurm-client, munge (scripts/install-deps.sh).
#
#   slurm-rig.sh up N      rig hosts PREFIX1..N, then the daemons; waits until every node is idle
#   slurm-rig.sh down      stops exactly what up started, removes the rig and the state folder
#   slurm-rig.sh env       prints `export SLURM_CONF=...` for the clients (sbatch, scontrol, ...)
#   slurm-rig.sh mpirun-wrapper  path of an mpirun that reaches the rig hosts (for the prolog)
#   slurm-rig.sh check     exit 0 when the packages are here and namespaces can be made
#
# Environment: DLRIG_PREFIX, DLRIG_NET (as netns-rig.sh), DLSLURM_PORT (19100:
# slurmctld; +1 slurmd), DLSLURM_PROLOG (a PrologSlurmctld program, optional),
# DLSLURM_CPUS (2 per node). State (slurm.conf, logs, munge key and socket,
# the jobcomp file) lives in /run/dlcomm-slurm-rig-PREFIX, nothing in /etc
# but the rig's own marked /etc/hosts lines.
set -euo pipefail

PREFIX=${DLRIG_PREFIX:-dlh}
NET=${DLRIG_NET:-10.213.77}
PORT=${DLSLURM_PORT:-19100}
CPUS=${DLSLURM_CPUS:-2}
STATE=/run/dlcomm-slurm-rig-$PREFIX
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RIG=$HERE/netns-rig.sh
CTL=${PREFIX}ctl
export DLRIG_PREFIX=$PREFIX DLRIG_NET=$NET

die() { echo "slurm-rig: $*" >&2; exit 2; }

cmd_check() {
  local p
  for p in munged slurmctld slurmd sbatch srun scontrol sinfo sacct; do
    command -v "$p" > /dev/null || { echo "slurm-rig: $p not found (apt-get install slurmctld slurmd slurm-client munge, or scripts/install-deps.sh)" >&2; exit 1; }
  done
  "$RIG" check
}

# The pid in FILE when it still runs the program named (else nothing).
live_pid() {
  local file=$1 prog=$2 pid
  [ -s "$file" ] || return 0
  pid=$(cat "$file")
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != "$prog" ] || echo "$pid"
}

# Stops the daemons up started, all at once (each takes about 2 s to go).
cmd_down() {
  [ "$(id -u)" -eq 0 ] || die "needs root"
  local f pids=() i p
  if [ -d "$STATE" ]; then
    mapfile -t pids < <(live_pid "$STATE/slurmctld.pid" slurmctld
                        for f in "$STATE"/slurmd-*.pid; do live_pid "$f" slurmd; done
                        live_pid "$STATE/munged.pid" munged)
    if [ "${#pids[@]}" -gt 0 ]; then
      kill -TERM "${pids[@]}" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do
        for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && break; p=; done
        [ -n "$p" ] || break
        sleep 0.1
      done
      kill -KILL "${pids[@]}" 2>/dev/null || true
    fi
  fi
  "$RIG" down
  rm -rf "$STATE"
}

write_conf() {
  local n=$1 i
  cat > "$STATE/slurm.conf" <<CONF
# written by dlcomm's scripts/slurm-rig.sh for a test cluster; not for production
ClusterName=${PREFIX}rig
SlurmctldHost=$CTL($NET.254)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
CommunicationParameters=NoCtldInAddrAny
AuthType=auth/munge
CredType=cred/munge
# cred_expire is also how long a requeued job waits before it may start (120 s
# by default); the scheduler passes are seconds apart instead of 30-60.
AuthInfo=socket=$STATE/munge.sock,cred_expire=10
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool-%n
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd-%n.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd-%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,bf_interval=2
MpiDefault=none
ReturnToService=2
JobRequeue=1
JobCompType=jobcomp/filetxt
JobCompLoc=$STATE/jobcomp.txt
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmctldTimeout=30
SlurmdTimeout=60
MessageTimeout=20
KillWait=5
InactiveLimit=0
MinJobAge=600
CONF
  if [ -n "${DLSLURM_PROLOG:-}" ]; then
    echo "PrologSlurmctld=$STATE/prolog" >> "$STATE/slurm.conf"
    write_prolog "$DLSLURM_PROLOG"
  fi
  # slurmd 22.05 always loads a cgroup plugin (there is no "disabled" before
  # 23.02), and its autodetection fails on hosts without a pure v1 or v2
  # mount. With proctrack/linuxproc and task/none it never touches a
  # hierarchy, so cgroup/v1 over an empty folder of the rig's own satisfies
  # it on any host (v1, v2, hybrid, or a container with none).
  mkdir -p "$STATE/cgroup"
  printf 'CgroupPlugin=cgroup/v1\nCgroupMountpoint=%s\n' "$STATE/cgroup" > "$STATE/cgroup.conf"
  for ((i = 1; i <= n; i++)); do
    echo "NodeName=$PREFIX$i NodeHostname=$PREFIX$i NodeAddr=$NET.$i CPUs=$CPUS State=UNKNOWN"
  done >> "$STATE/slurm.conf"
  echo "PartitionName=rig Nodes=${PREFIX}[1-$n] Default=YES MaxTime=INFINITE State=UP" >> "$STATE/slurm.conf"
}

# slurmctld runs PrologSlurmctld with SLURM_JOB_* and nothing else: no PATH,
# no SLURM_CONF (its scontrol would read /etc/slurm), none of the caller's
# variables. The rig's wrapper gives it those two and DLCOMM_PROLOG_CONF,
# the file slurm-prolog.sh reads its settings from (the tests write it).
write_prolog() {
  cat > "$STATE/prolog" <<W
#!/bin/sh
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
SLURM_CONF=$STATE/slurm.conf
DLCOMM_PROLOG_CONF=$STATE/prolog.conf
export PATH SLURM_CONF DLCOMM_PROLOG_CONF
exec "$1"
W
  chmod 755 "$STATE/prolog"
}

# An mpirun for programs started outside a rig host (the controller's
# prolog, which names the job's nodes): netns-rig.sh mpirun, this rig's.
write_mpirun() {
  cat > "$STATE/mpirun" <<W
#!/bin/sh
DLRIG_PREFIX=$PREFIX DLRIG_NET=$NET exec "$RIG" mpirun "\$@"
W
  chmod 755 "$STATE/mpirun"
}

cmd_up() {
  local n=${1:-} i
  if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 64 ]; then
    die "up N: N must be 1..64"
  fi
  [ "$(id -u)" -eq 0 ] || die "needs root"
  cmd_down
  trap 'tail -n 5 "$STATE"/*.log >&2 || true; cmd_down; exit 1' ERR
  "$RIG" up "$((n < 2 ? 2 : n))" > /dev/null
  mkdir -p "$STATE/ctld"
  for ((i = 1; i <= n; i++)); do
    mkdir -p "$STATE/spool-$PREFIX$i" "$STATE/tmp-$PREFIX$i"
    chmod 1777 "$STATE/tmp-$PREFIX$i"
  done
  # The controller's name resolves to the bridge (netns-rig.sh down drops the line).
  printf '%s %s # dlcomm-netns-rig %s\n' "$NET.254" "$CTL" "$PREFIX" >> /etc/hosts
  chmod 755 "$STATE"
  head -c 1024 /dev/urandom > "$STATE/munge.key"
  chmod 400 "$STATE/munge.key"
  munged --force --socket="$STATE/munge.sock" --key-file="$STATE/munge.key" \
    --pid-file="$STATE/munged.pid" --log-file="$STATE/munged.log" --seed-file="$STATE/munge.seed"
  write_conf "$n"
  write_mpirun
  export SLURM_CONF=$STATE/slurm.conf
  # shellcheck disable=SC2016 # $1 and $2 are the inner shell's
  unshare --uts -- sh -c 'hostname "$1" && exec slurmctld -c -f "$2"' slurm-rig "$CTL" "$SLURM_CONF"
  # Each node gets its own /tmp, as real nodes have (the PMIx plugin's and
  # Open MPI's per-step folders there are named by job and step, not node).
  # `ip netns exec` already gives the node a mount namespace of its own.
  for ((i = 1; i <= n; i++)); do
    # shellcheck disable=SC2016 # $1, $2 and $3 are the inner shell's
    ip netns exec "$PREFIX$i" unshare --uts -- \
      sh -c 'mount --bind "$3" /tmp && hostname "$1" && exec slurmd -f "$2" -N "$1"' \
      slurm-rig "$PREFIX$i" "$SLURM_CONF" "$STATE/tmp-$PREFIX$i"
  done
  trap - ERR
  local idle=0
  for ((i = 0; i < 120; i++)); do
    idle=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 == "idle"' | wc -l || true)
    [ "$idle" -eq "$n" ] && break
    sleep 0.5
  done
  if [ "$idle" -ne "$n" ]; then
    sinfo -N >&2 || true
    tail -5 "$STATE/slurmctld.log" >&2 || true
    cmd_down
    die "only $idle of $n nodes became idle"
  fi
  echo "slurm-rig: $n nodes ${PREFIX}[1-$n] idle; export SLURM_CONF=$SLURM_CONF"
}

case ${1:-} in
  up) shift; cmd_up "$@" ;;
  down) cmd_down ;;
  env) echo "export SLURM_CONF=$STATE/slurm.conf" ;;
  mpirun-wrapper) echo "$STATE/mpirun" ;;
  state) echo "$STATE" ;;
  check) cmd_check ;;
  *) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
