#!/bin/sh
# A build folder outside the source tree (as a user's /tmp/build) finds the
# source tree's profiles and systems from any working directory.
set -eu
. "$(dirname "$0")/common.sh"
B=$(mktemp -d /tmp/dlcomm-oot.XXXXXX)
trap 'rm -rf "$B"' EXIT
# Only the program, without the nccl backend or optimisation: the point is
# where it looks for its files, and CI's two cores.
"$DL_CMAKE" -S "$DL_SOURCE" -B "$B" -DBUILD_TESTING=OFF -DDLCOMM_NCCL=OFF -DCMAKE_BUILD_TYPE=Plain \
  >"$B.log" 2>&1 || { cat "$B.log"; fail "configure exited $?"; }
"$DL_CMAKE" --build "$B" -j 2 --target dlcomm >>"$B.log" 2>&1 || { tail -20 "$B.log"; fail "build exited $?"; }
rm -f "$B.log"
profiles_from "$B/dlcomm" "$DL_SOURCE/topologies/profiles"
sim_sweep "$B/dlcomm" default,p2p-off,socket "$B/run"
echo "ok: $B/dlcomm ran from / with the source tree's profiles"
