#!/bin/bash
# Slurm prolog: runs dlcomm preflight across the job's nodes and drains the
# nodes the verdict names, so the job (requeued by Slurm on a non-zero exit)
# lands on healthy ones.
#
# Use as PrologSlurmctld (slurm.conf), which runs once per job on the
# controller with SLURM_JOB_ID and SLURM_JOB_NODELIST set, and launches
# mpirun over the nodes (ssh must reach them as the prolog's user).
#
# Environment (all optional):
#   DLCOMM_BIN              dlcomm on the nodes        [/opt/dlcomm/bin/dlcomm]
#   DLCOMM_MPIRUN           mpirun                     [mpirun]
#   DLCOMM_RANKS_PER_NODE   ranks (GPUs) per node      [8]
#   DLCOMM_PREFLIGHT_ARGS   extra preflight options    [--quick]
#   DLCOMM_PREFLIGHT_DIR    where the JSON verdicts go [/var/log/dlcomm]
#   DLCOMM_DRAIN            1: drain named nodes; 0: report only [1]
#   DLCOMM_BROKE_BLOCKS     1: a run that broke (exit 3) fails the prolog [0]
#   SCONTROL                scontrol                   [scontrol]
# Exit: 0 when the nodes passed (or preflight itself broke and
# DLCOMM_BROKE_BLOCKS=0: a harness fault must not take nodes out), 1 when a
# check failed (named nodes drained), 2 on bad set-up.
set -uo pipefail

BIN=${DLCOMM_BIN:-/opt/dlcomm/bin/dlcomm}
MPIRUN=${DLCOMM_MPIRUN:-mpirun}
PER_NODE=${DLCOMM_RANKS_PER_NODE:-8}
ARGS=${DLCOMM_PREFLIGHT_ARGS:---quick}
DIR=${DLCOMM_PREFLIGHT_DIR:-/var/log/dlcomm}
DRAIN=${DLCOMM_DRAIN:-1}
BROKE_BLOCKS=${DLCOMM_BROKE_BLOCKS:-0}
SCONTROL=${SCONTROL:-scontrol}
JOB=${SLURM_JOB_ID:-manual}

log() { echo "dlcomm-prolog[$JOB]: $*" >&2; }

if [ -z "${SLURM_JOB_NODELIST:-}" ]; then
  log "SLURM_JOB_NODELIST is not set"; exit 2
fi
[[ $PER_NODE =~ ^[1-9][0-9]*$ ]] || { log "DLCOMM_RANKS_PER_NODE must be a positive number"; exit 2; }
mkdir -p "$DIR" || { log "cannot create $DIR"; exit 2; }
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT

mapfile -t nodes < <("$SCONTROL" show hostnames "$SLURM_JOB_NODELIST")
if [ "${#nodes[@]}" -eq 0 ]; then
  log "no nodes in '$SLURM_JOB_NODELIST'"; exit 2
fi
for n in "${nodes[@]}"; do
  printf '%s slots=%s\n' "$n" "$PER_NODE"
done > "$work/hostfile"

json=$DIR/preflight-$JOB.json
root=()
[ "$(id -u)" -ne 0 ] || root=(--allow-run-as-root)
# ARGS is a list of options: split on blanks on purpose.
# shellcheck disable=SC2206
extra=($ARGS)
"$MPIRUN" "${root[@]}" --hostfile "$work/hostfile" -np $(( ${#nodes[@]} * PER_NODE )) \
  --map-by "ppr:$PER_NODE:node" "$BIN" preflight "${extra[@]}" --json "$json" \
  > "$DIR/preflight-$JOB.log" 2>&1
rc=$?

# The hosts the verdict names (JSON through python3 when present, else the
# VERDICT line: "VERDICT FAIL ... hosts=a,b").
named_hosts() {
  if command -v python3 > /dev/null && [ -s "$json" ]; then
    python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["verdict"].get("hosts", [])))' "$json"
  else
    sed -n 's/^VERDICT FAIL.* hosts=\([^ ]*\).*/\1/p' "$DIR/preflight-$JOB.log" | tr ',' '\n'
  fi
}

case $rc in
  0) log "preflight passed on ${#nodes[@]} nodes"; exit 0 ;;
  1) ;;
  3) log "preflight broke (communication error or timeout), see $DIR/preflight-$JOB.log"
     [ "$BROKE_BLOCKS" = 1 ] && exit 1
     exit 0 ;;
  *) log "preflight could not run (exit $rc), see $DIR/preflight-$JOB.log"; exit 2 ;;
esac

mapfile -t bad < <(named_hosts)
if [ "${#bad[@]}" -eq 0 ]; then
  log "preflight failed without naming a node; see $json"; exit 1
fi
for h in "${bad[@]}"; do
  # Only nodes of this job are touched, whatever the file says.
  printf '%s\n' "${nodes[@]}" | grep -qxF -- "$h" || { log "ignoring '$h': not in this job"; continue; }
  if [ "$DRAIN" = 1 ]; then
    log "draining $h"
    "$SCONTROL" update "nodename=$h" state=drain "reason=dlcomm preflight failed (job $JOB, $json)"
  else
    log "would drain $h"
  fi
done
exit 1
