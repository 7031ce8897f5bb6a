#!/bin/sh
# Builds dlcomm with its tests in build/ and runs them all through ctest.
set -eu
cd "$(dirname "$0")/.."
# nvcc lives here on hosts with the CUDA toolkit: the nccl backend is built then.
[ -d /usr/local/cuda/bin ] && PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)"
cd build && ctest --output-on-failure -j 2 "$@"
