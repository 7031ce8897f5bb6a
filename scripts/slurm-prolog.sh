#!/bin/bash
# Slurm prolog: runs dlcomm preflight across the job's nodes and drains the
# nodes the verdict names, so the job (requeued by Slurm on a non-zero exit)
# lands on healthy ones.
#
# Use as PrologSlurmctld (slurm.conf), which runs once per job on the
# controller with SLURM_JOB_ID and SLURM_JOB_NODELIST set, and launches
# mpirun over the nodes (ssh must reach them as the prolog's user). The job
# must be requeueable (JobRequeue=1 in slurm.conf, or sbatch --requeue).
#
# slurmctld gives the prolog no other environment (not even PATH), so the
# settings below are read from a file, DLCOMM_PROLOG_CONF
# [/etc/dlcomm/prolog.conf]: one NAME=VALUE a line, NAME one of those below,
# '#' comments, the last line of a name counting; it is read, never run. A
# variable set in the environment wins over the file.
#   DLCOMM_BIN              dlcomm on the nodes        [/opt/dlcomm/bin/dlcomm]
#   DLCOMM_MPIRUN           mpirun                     [mpirun]
#   DLCOMM_RANKS_PER_NODE   ranks (GPUs) per node      [8]
#   DLCOMM_PREFLIGHT_ARGS   extra preflight options    [--quick]
#   DLCOMM_PREFLIGHT_DIR    where the JSON verdicts and prolog.log go [/var/log/dlcomm]
#   DLCOMM_PROLOG_TIMEOUT   seconds the whole preflight may take (then SIGTERM,
#                           SIGKILL 5 s later) [300]
#   DLCOMM_DRAIN            1: drain named nodes; 0: report only [1]
#   DLCOMM_BROKE_BLOCKS     1: a preflight that broke fails the prolog [0]
#   SCONTROL                scontrol                   [scontrol]
# Exit: 0 when the nodes passed, or when preflight broke, timed out or could
# not run and DLCOMM_BROKE_BLOCKS=0 (a harness fault must not take nodes out
# nor hold jobs back: nothing is drained, prolog.log says why); 1 when a
# check failed (named nodes drained, Slurm requeues the job); 2 on bad set-up.
set -uo pipefail

JOB=${SLURM_JOB_ID:-manual}
log() {
  echo "dlcomm-prolog[$JOB]: $*" >&2
  [ -z "${LOG:-}" ] || printf '%s dlcomm-prolog[%s]: %s\n' "$(date -u +%FT%TZ)" "$JOB" "$*" >> "$LOG"
}

# The settings file: only the names above, a value taken as written (one
# pair of surrounding quotes dropped), the last line of a name kept.
conf=${DLCOMM_PROLOG_CONF:-/etc/dlcomm/prolog.conf}
declare -A from_file=()
if [ -r "$conf" ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    if ! [[ $line =~ ^(DLCOMM_(BIN|MPIRUN|RANKS_PER_NODE|PREFLIGHT_ARGS|PREFLIGHT_DIR|PROLOG_TIMEOUT|DRAIN|BROKE_BLOCKS)|SCONTROL)=(.*)$ ]]; then
      log "$conf: ignoring '$line'"; continue
    fi
    name=${BASH_REMATCH[1]} value=${BASH_REMATCH[3]}
    [[ $value =~ ^\"(.*)\"$ || $value =~ ^\'(.*)\'$ ]] && value=${BASH_REMATCH[1]}
    from_file[$name]=$value
  done < "$conf"
fi
for name in "${!from_file[@]}"; do
  [ -n "${!name+set}" ] || printf -v "$name" '%s' "${from_file[$name]}"
done

BIN=${DLCOMM_BIN:-/opt/dlcomm/bin/dlcomm}
MPIRUN=${DLCOMM_MPIRUN:-mpirun}
PER_NODE=${DLCOMM_RANKS_PER_NODE:-8}
ARGS=${DLCOMM_PREFLIGHT_ARGS:---quick}
DIR=${DLCOMM_PREFLIGHT_DIR:-/var/log/dlcomm}
LIMIT=${DLCOMM_PROLOG_TIMEOUT:-300}
DRAIN=${DLCOMM_DRAIN:-1}
BROKE_BLOCKS=${DLCOMM_BROKE_BLOCKS:-0}
SCONTROL=${SCONTROL:-scontrol}

if [ -z "${SLURM_JOB_NODELIST:-}" ]; then
  log "SLURM_JOB_NODELIST is not set"; exit 2
fi
[[ $PER_NODE =~ ^[1-9][0-9]*$ ]] || { log "DLCOMM_RANKS_PER_NODE must be a positive number"; exit 2; }
[[ $LIMIT =~ ^[1-9][0-9]*$ ]] || { log "DLCOMM_PROLOG_TIMEOUT must be a positive number of seconds"; exit 2; }
mkdir -p "$DIR" || { log "cannot create $DIR"; exit 2; }
LOG=$DIR/prolog.log
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT

mapfile -t nodes < <("$SCONTROL" show hostnames "$SLURM_JOB_NODELIST")
if [ "${#nodes[@]}" -eq 0 ]; then
  log "no nodes in '$SLURM_JOB_NODELIST'"; exit 2
fi
for n in "${nodes[@]}"; do
  printf '%s slots=%s\n' "$n" "$PER_NODE"
done > "$work/hostfile"

# A requeued job runs its prolog again: each run keeps its own files, so the
# verdict a drain reason points to is never overwritten.
tag=$JOB
[ "${SLURM_JOB_RESTART_COUNT:-0}" = 0 ] || tag=$JOB.$SLURM_JOB_RESTART_COUNT
json=$DIR/preflight-$tag.json
out=$DIR/preflight-$tag.log
root=()
[ "$(id -u)" -ne 0 ] || root=(--allow-run-as-root)
# Open MPI takes SLURM_JOB_ID and friends for "inside an allocation" and would
# launch through srun, which cannot run before the job does: mpirun gets the
# prolog's environment without them and reaches the nodes its own way.
unset_slurm=()
for v in $(compgen -e); do
  [[ $v == SLURM_* ]] && unset_slurm+=(-u "$v")
done
# ARGS is a list of options: split on blanks on purpose.
# shellcheck disable=SC2206
extra=($ARGS)
# Past the limit mpirun gets SIGTERM (it passes it to the ranks), and
# SIGKILL GRACE seconds later (its daemons on the nodes then end their ranks).
GRACE=5
timeout -k "$GRACE" "$LIMIT" env "${unset_slurm[@]}" "$MPIRUN" "${root[@]}" --hostfile "$work/hostfile" \
  -np $(( ${#nodes[@]} * PER_NODE )) --map-by "ppr:$PER_NODE:node" \
  "$BIN" preflight "${extra[@]}" --json "$json" > "$out" 2>&1
rc=$?

# The hosts the verdict names (JSON through python3 when present, else the
# VERDICT line: "VERDICT FAIL ... hosts=a,b").
named_hosts() {
  if command -v python3 > /dev/null && [ -s "$json" ]; then
    python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["verdict"].get("hosts", [])))' "$json"
  else
    sed -n 's/^VERDICT FAIL.* hosts=\([^ ]*\).*/\1/p' "$out" | tr ',' '\n'
  fi
}

# Anything but a verdict (0 or 1) is the harness's fault, not a node's.
broke() {
  log "$1; drained nobody ($SECONDS s), see $out"
  [ "$BROKE_BLOCKS" = 1 ] && exit 1
  exit 0
}
case $rc in
  0) log "preflight passed on ${#nodes[@]} nodes (${nodes[*]}) in $SECONDS s"; exit 0 ;;
  1) ;;
  3) broke "preflight broke (communication error or its own --timeout)" ;;
  124|137) broke "preflight did not finish within DLCOMM_PROLOG_TIMEOUT=${LIMIT} s and was stopped" ;;
  *) broke "preflight could not run (exit $rc)" ;;
esac

mapfile -t bad < <(named_hosts)
if [ "${#bad[@]}" -eq 0 ]; then
  log "preflight failed without naming a node; see $json"; exit 1
fi
for h in "${bad[@]}"; do
  # Only nodes of this job are touched, whatever the file says.
  printf '%s\n' "${nodes[@]}" | grep -qxF -- "$h" || { log "ignoring '$h': not in this job"; continue; }
  if [ "$DRAIN" = 1 ]; then
    log "draining $h (preflight on ${nodes[*]}, $SECONDS s)"
    "$SCONTROL" update "nodename=$h" state=drain "reason=dlcomm preflight failed (job $JOB, $json)" \
      || log "scontrol could not drain $h"
  else
    log "would drain $h"
  fi
done
exit 1
