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
  for p in munged slurmctld slurmd sbatch scontrol; do
    command -v "$p" > /dev/null || { echo "slurm-rig: $p not found (apt-get install slurmctld slurmd slurm-client munge)" >&2; exit 1; }
  done
  "$RIG" check
}

# Stops a daemon by its pid file, only if that pid still runs the program named.
stop_pid() {
  local file=$1 prog=$2 pid i
  [ -s "$file" ] || return 0
  pid=$(cat "$file")
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$prog" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
}

cmd_down() {
  [ "$(id -u)" -eq 0 ] || die "needs root"
  local f
  if [ -d "$STATE" ]; then
    stop_pid "$STATE/slurmctld.pid" slurmctld
    for f in "$STATE"/slurmd-*.pid; do
      [ -e "$f" ] && stop_pid "$f" slurmd
    done
    stop_pid "$STATE/munged.pid" munged
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
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$STATE/munge.sock
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
    echo "PrologSlurmctld=$DLSLURM_PROLOG" >> "$STATE/slurm.conf"
  fi
  # slurmd 22.05 loads a cgroup plugin even with proctrack/linuxproc and
  # task/none (it uses none of it for jobs); its autodetection fails on a
  # hybrid v1 layout (a tmpfs at /sys/fs/cgroup), so that one is named.
  if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = tmpfs ] && [ -d /sys/fs/cgroup/freezer ]; then
    printf 'CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\n' > "$STATE/cgroup.conf"
  else
    printf 'IgnoreSystemd=yes\n' > "$STATE/cgroup.conf"
  fi
  for ((i = 1; i <= n; i++)); do
    echo "NodeName=$PREFIX$i NodeHostname=$PREFIX$i NodeAddr=$NET.$i CPUs=$CPUS State=UNKNOWN"
  done >> "$STATE/slurm.conf"
  echo "PartitionName=rig Nodes=${PREFIX}[1-$n] Default=YES MaxTime=INFINITE State=UP" >> "$STATE/slurm.conf"
}

# An mpirun for programs started outside a rig host (the controller's
# prolog): the rig's rsh agent and its network, the way netns-rig.sh mpirun does.
write_mpirun() {
  cat > "$STATE/mpirun" <<W
#!/bin/sh
exec mpirun --mca plm_rsh_agent "$HERE/netns-rig-agent.sh" --mca plm_rsh_no_tree_spawn 1 \\
  --mca orte_leave_session_attached 1 --mca oob_tcp_if_include "$NET.0/24" \\
  --mca btl_tcp_if_include "$NET.0/24" --mca btl tcp,vader,self --mca mpi_yield_when_idle 1 \\
  --mca plm rsh --mca ras ^slurm "\$@"
W
  chmod 755 "$STATE/mpirun"
}

cmd_up() {
  local n=${1:-}
  if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 64 ]; then
    die "up N: N must be 1..64"
  fi
  [ "$(id -u)" -eq 0 ] || die "needs root"
  cmd_down
  trap 'tail -n 5 "$STATE"/*.log >&2 || true; cmd_down; exit 1' ERR
  "$RIG" up "$((n < 2 ? 2 : n))" > /dev/null
  mkdir -p "$STATE/ctld"
  # The controller's name resolves to the bridge (netns-rig.sh down drops the line).
  printf '%s %s # dlcomm-netns-rig %s\n' "$NET.254" "$CTL" "$PREFIX" >> /etc/hosts
  chmod 700 "$STATE"
  head -c 1024 /dev/urandom > "$STATE/munge.key"
  chmod 400 "$STATE/munge.key"
  munged --force --socket="$STATE/munge.sock" --key-file="$STATE/munge.key" \
    --pid-file="$STATE/munged.pid" --log-file="$STATE/munged.log" --seed-file="$STATE/munge.seed"
  write_conf "$n"
  write_mpirun
  export SLURM_CONF=$STATE/slurm.conf
  # shellcheck disable=SC2016 # $1 and $2 are the inner shell's
  unshare --uts -- sh -c 'hostname "$1" && exec slurmctld -c -f "$2"' slurm-rig "$CTL" "$SLURM_CONF"
  local i
  for ((i = 1; i <= n; i++)); do
    # shellcheck disable=SC2016 # $1 and $2 are the inner shell's
    ip netns exec "$PREFIX$i" unshare --uts -- \
      sh -c 'hostname "$1" && exec slurmd -f "$2" -N "$1"' slurm-rig "$PREFIX$i" "$SLURM_CONF"
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
