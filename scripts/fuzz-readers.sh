#!/bin/sh
# Fuzzes dlcomm's run readers (dlcomm run.json, nccl-tests JSON and text, told
# apart by content) with libFuzzer + AddressSanitizer + UBSan.
#   scripts/fuzz-readers.sh [SECONDS] [BUILD_DIR]    (default 60 s, build-fuzz)
# Needs clang with libFuzzer (Debian 12: apt-get install clang) and libcjson-dev.
# The corpus grows in BUILD_DIR/corpus, seeded from tests/fuzz/seeds and the
# nccl-tests samples; a crash or leak stops the run with a non-zero exit and
# leaves the input as BUILD_DIR/crash-* / leak-*.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-60}
out=${2:-build-fuzz}
command -v clang >/dev/null || { echo "fuzz-readers: clang is not installed" >&2; exit 2; }
mkdir -p "$out/corpus"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -D_GNU_SOURCE -DDL_VERSION='"fuzz"' -Isrc $(pkg-config --cflags libcjson) \
  tests/fuzz/fuzz_readers.c src/analysis/*.c src/util/*.c \
  $(pkg-config --libs libcjson) -lm -o "$out/fuzz_readers"
cp tests/fuzz/seeds/* tests/analysis/data/* "$out/corpus/"
cd "$out"
exec ./fuzz_readers -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 corpus
