#!/bin/sh
# Builds dlcomm on a GPU host that cannot download anything: the Debian
# packages of cJSON and cmocka are brought along in DEPS (default .deps/,
# made on a Debian host with `apt-get download libcjson1 libcjson-dev
# libcmocka0 libcmocka-dev`) and unpacked into /tmp/deps.
# Usage: scripts/gpu-host-build.sh [SRC] [BUILD]
set -eu
SRC=${1:-.}
BUILD=${2:-build-gpu}
DEPS=${DEPS:-.deps}
mkdir -p /tmp/deps
for f in "$DEPS"/*.deb; do dpkg -x "$f" /tmp/deps; done
export PKG_CONFIG_SYSROOT_DIR=/tmp/deps
export PKG_CONFIG_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu/pkgconfig
export PATH=/usr/local/cuda/bin:$PATH
# The build runs the program it made (dlcomm __man writes the man pages).
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -x /opt/gcc/bin/g++ ] && export CUDAHOSTCXX=/opt/gcc/bin/g++
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
cmake --build "$BUILD" -j "$(nproc)" ${TARGET:+--target $TARGET}
