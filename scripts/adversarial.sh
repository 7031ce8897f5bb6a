#!/bin/sh
# On demand, not in CI: every group of tests/hardening (signals included; the
# second round's, round2_test.py, too),
# then the wider classes of scripts/adversarial_wide.py: type mutations of a
# real run.json and random bytes through every reader, random option
# combinations from the option tables, --out and output files on special
# and full filesystems, stdout trouble, mutated input files, DLCOMM_INJECT
# grammar, secrets in profiles. Any broken promise is a finding (exit 1).
#   scripts/adversarial.sh [BUILD_DIR] [SCALE]
# The second round's classes (round2_test.py): the nccl-tests version
# corpus, resource limits, what is printed.
# Defaults build, 1 (about 10 minutes on 2 cores); SCALE multiplies every
# class's count (0.1: a two-minute look; readers: 400 mutations at 1).
# Last figures: results/reference/hardening.md.
set -u
cd "$(dirname "$0")/.."
b=${1:-build}
scale=${2:-1}
mpirun="mpirun --oversubscribe"
[ "$(id -u)" = 0 ] && mpirun="$mpirun --allow-run-as-root"
python3 tests/hardening/hardening_test.py --bin "$b/dlcomm" --mpirun "$mpirun" \
  defects options files encodings concurrency secrets signals wide
rc=$?
python3 tests/hardening/round2_test.py --bin "$b/dlcomm" --mpirun "$mpirun" \
  links unattended launch silent || rc=1
python3 tests/hardening/round2b_test.py --bin "$b/dlcomm" --mpirun "$mpirun" \
  --fail-threads "$b/tests/libdl_fail_threads.so" ncclt_corpus limits truth || rc=1
python3 scripts/adversarial_wide.py --bin "$b/dlcomm" --mpirun "$mpirun" --scale "$scale" \
  --json "${TMPDIR:-/tmp}/dlcomm-adversarial-wide.json" || rc=1
exit $rc
