#!/bin/sh
# shellcheck disable=SC2086  # MPIRUN, MPI and SIM are split into words on purpose
# Writes run.json files with an EARLIER dlcomm, and what that dlcomm's compare
# and report said of them, for old_records.py (the compatibility test: the
# current readers must say the same). Run once per old version, from a build
# of that version, e.g. for 9fd692f:
#   git worktree add --detach /tmp/old 9fd692f && cmake -S /tmp/old -B /tmp/old/build \
#     -DDLCOMM_NCCL=OFF && cmake --build /tmp/old/build --target dlcomm
#   tests/data/old-records/make.sh /tmp/old/build/dlcomm 9fd692f "mpirun --oversubscribe"
# Files: TAG-NAME.json (the runs), TAG-NAME.out (the old output of a command,
# listed in TAG.cmds as NAME<TAB>ARGS). Small on purpose: few sizes, 2-4 ranks.
set -eu
BIN=$1 TAG=$2 MPIRUN=$3
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/dlcomm-old-records.XXXXXX)
trap 'rm -rf "$T"' EXIT
run() { # NAME NP [ENV=VALUE] -- SWEEP ARGS
  name=$1 np=$2; shift 2
  env=""
  if [ "$1" != "--" ]; then env=$1; shift; fi
  shift
  if [ -n "$env" ]; then
    env "$env" $MPIRUN -np "$np" -x "${env%%=*}" "$BIN" sweep --out "$T/$name" -q "$@" >/dev/null 2>&1 || true
  else
    $MPIRUN -np "$np" "$BIN" sweep --out "$T/$name" -q "$@" >/dev/null 2>&1 || true
  fi
  cp "$T/$name/run.json" "$HERE/$TAG-$name.json"
}
MPI="--backend mpi -c allreduce,allgather,broadcast -b 8 -e 512 -f 8 -n 20 -w 2"
SIM="--backend sim --system h200-sxm-8 -p ring,tree -c allreduce -b 1K -e 16M -f 64"
run mpi 2 -- $MPI
run mpi2 2 -- $MPI
run split 4 -- --backend mpi --split mod:2 -c allreduce -b 8 -e 1K -f 16 -n 10 -w 1
run sim 2 -- $SIM
run crash 2 DLCOMM_INJECT=crash:1:ring -- $SIM
cmds="$HERE/$TAG.cmds"
: >"$cmds"
out() { # NAME ARGS...: the old dlcomm's stdout and exit code, run in this folder
  name=$1; shift
  printf '%s\t%s\n' "$name" "$*" >>"$cmds"
  code=0
  (cd "$HERE" && "$BIN" "$@") >"$HERE/$TAG-$name.out" 2>/dev/null || code=$?
  echo "exit $code" >>"$HERE/$TAG-$name.out"
}
for r in mpi split sim crash; do
  out "report-$r" report "$TAG-$r.json" --json
done
out report-crash-text report "$TAG-crash.json"
out report-base report "$TAG-mpi2.json" --baseline "$TAG-mpi.json" --json
out compare compare "$TAG-mpi.json" "$TAG-mpi2.json"
out compare-sim compare "$TAG-sim.json" "$TAG-crash.json"
