#!/bin/sh
# Builds dlcomm with its tests in build/ and runs them all through ctest.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)"
cd build && ctest --output-on-failure -j 2 "$@"
