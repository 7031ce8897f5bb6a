#!/bin/sh
# Installs what is missing, builds dlcomm in build/, and runs a real sweep on
# 4 MPI ranks (on CPU ranks through MPI when there is no GPU). Extra
# arguments go to `dlcomm sweep`.
set -eu
cd "$(dirname "$0")/.."
# nvcc lives here on hosts with the CUDA toolkit: the nccl backend is built then.
[ -d /usr/local/cuda/bin ] && PATH="/usr/local/cuda/bin:$PATH"
./scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)"
root=""
[ "$(id -u)" -ne 0 ] || root="--allow-run-as-root"
exec mpirun $root --oversubscribe -np "${NP:-4}" build/dlcomm sweep -b 8 -e 1M "$@"
