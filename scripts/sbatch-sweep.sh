#!/bin/bash
# An example Slurm batch job: a preflight gate, then a dlcomm sweep across
# the allocation, one rank per GPU.
#   sbatch scripts/sbatch-sweep.sh            (edit the #SBATCH lines first)
#SBATCH --job-name=dlcomm-sweep
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=8
#SBATCH --time=00:30:00
#SBATCH --output=dlcomm-%j.out
#SBATCH --exclusive
set -euo pipefail

DLCOMM=${DLCOMM_BIN:-dlcomm}
OUT=${DLCOMM_OUT:-results/$(date -u +%Y%m%d)-slurm-${SLURM_JOB_ID:-manual}}

# Slurm's own launcher places one rank per GPU and binds it to the GPU's
# NUMA node; preflight checks that binding.
launch=(srun --mpi=pmix "--cpu-bind=verbose,ldoms" --gpu-bind=closest)

# Gate: a failing node stops the job here (exit 1 names it in the JSON).
"${launch[@]}" "$DLCOMM" preflight --quick --json "$OUT-preflight.json"

# The sweep: all collectives, large sizes, the profiles given in DLCOMM_PROFILES.
"${launch[@]}" "$DLCOMM" sweep -c all -b 8 -e 8G -f 2 -d float32,bfloat16 -p "${DLCOMM_PROFILES:-default}" --out "$OUT"
echo "results in $OUT"
