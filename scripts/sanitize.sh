#!/bin/sh
# Builds dlcomm with AddressSanitizer + UBSan (build-asan/) and runs the
# hardening class tests and the unit tests against it: every hostile input
# of tests/hardening/ goes through an instrumented binary.
#   scripts/sanitize.sh [BUILD_DIR]    (default build-asan)
# A sanitizer report makes the process exit non-zero (halt_on_error), which
# the tests count as a failure. Last figures: results/reference/sanitize.md.
set -eu
cd "$(dirname "$0")/.."
out=${1:-build-asan}
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B "$out" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$out" -j2 >/dev/null
# MPI's own allocations are not dlcomm's to fix: leaks are not reported.
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
cd "$out"
rc=0
ctest -L unit -j2 --output-on-failure || rc=1
ctest -L hardening -LE signals -j2 --output-on-failure || rc=1
# The signals group sends SIGSEGV with kill: it must reach the worker's wait
# status and the rank's own handler as in a normal build, not ASan's report.
ASAN_OPTIONS=$ASAN_OPTIONS:handle_segv=0:handle_sigbus=0 \
  ctest -L signals --output-on-failure || rc=1
exit $rc
