#!/bin/bash
# An example Slurm batch job: a preflight gate, then a dlcomm sweep across
# the allocation, one rank per GPU.
#   sbatch scripts/sbatch-sweep.sh            (edit the #SBATCH lines first)
# Options on sbatch's command line override the #SBATCH lines (the tests run
# it on CPU nodes with -N3 --ntasks-per-node=2 --cpus-per-task=1 --gpus-per-node=0).
#SBATCH --job-name=dlcomm-sweep
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=8
#SBATCH --time=00:30:00
#SBATCH --output=dlcomm-%j.out
#SBATCH --exclusive
#
# Environment (sbatch passes the submitter's on):
#   DLCOMM_BIN             dlcomm                                   [dlcomm]
#   DLCOMM_OUT             the sweep's folder; the gate's JSON is DLCOMM_OUT-preflight.json
#                          [results/YYYYMMDD-slurm-JOBID, in the submit folder]
#   DLCOMM_PREFLIGHT_ARGS  the gate's options                       [--quick]
#   DLCOMM_SWEEP_ARGS      the sweep's options  [-c all -b 8 -e 8G -f 2 -d float32,bfloat16]
#   DLCOMM_PROFILES        the sweep's profiles, -p (nccl and sim) [none: the backend's default]
# Exit: the gate's (1: a node failed, named in the JSON; the sweep does not
# run), else the sweep's.
set -euo pipefail

DLCOMM=${DLCOMM_BIN:-dlcomm}
OUT=${DLCOMM_OUT:-results/$(date -u +%Y%m%d)-slurm-${SLURM_JOB_ID:-manual}}
# Option lists: split on blanks on purpose.
# shellcheck disable=SC2206
preflight=(${DLCOMM_PREFLIGHT_ARGS:---quick})
# shellcheck disable=SC2206
sweep=(${DLCOMM_SWEEP_ARGS:--c all -b 8 -e 8G -f 2 -d float32,bfloat16})
profiles=()
[ -z "${DLCOMM_PROFILES:-}" ] || profiles=(-p "$DLCOMM_PROFILES")
mkdir -p "$(dirname "$OUT")"

# Slurm's own launcher places one rank per GPU and binds it to the GPU's
# NUMA node; preflight checks that binding. Open MPI's ranks get their
# places from Slurm's PMIx plugin (srun --mpi=list shows pmix on Debian 12).
launch=(srun --mpi=pmix "--cpu-bind=verbose,ldoms" --gpu-bind=closest)

# Through dlcomm launch: the job's exit code is dlcomm's, and `scancel -s TERM
# -b` reaches the ranks as an interrupt they record (srun itself, sent
# SIGTERM, would kill the step at once).
# Gate: a failing node stops the job here (exit 1 names it in the JSON).
"$DLCOMM" launch "${launch[@]}" "$DLCOMM" preflight "${preflight[@]}" --json "$OUT-preflight.json"

# The sweep: all collectives, large sizes, the profiles given in DLCOMM_PROFILES.
"$DLCOMM" launch "${launch[@]}" "$DLCOMM" sweep "${sweep[@]}" "${profiles[@]}" --out "$OUT"
echo "results in $OUT"
