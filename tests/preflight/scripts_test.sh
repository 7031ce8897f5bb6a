#!/bin/bash
# The scripts around preflight.
#   scripts_test.sh syntax SCRIPTS_DIR
#     every shell script parses (sh -n / bash -n by its shebang) and
#     passes ShellCheck when installed; the MPIJob manifest and the Containerfile
#     pass check_scripts.py (with and without PyYAML).
# The Slurm prolog and the sbatch example run under a real Slurm in
# tests/slurm (slurm_* tests).
set -euo pipefail
mode=$1 dir=$2
here=$(cd "$(dirname "$0")" && pwd)

[ "$mode" = syntax ] || { echo "usage: scripts_test.sh syntax SCRIPTS_DIR" >&2; exit 2; }
for f in "$dir"/*.sh; do
  case $(head -1 "$f") in
    *bash*) bash -n "$f" ;;
    *) sh -n "$f" ;;
  esac
  echo "parses: $f"
done
if command -v shellcheck > /dev/null; then
  shellcheck "$dir"/netns-rig.sh "$dir"/netns-rig-agent.sh "$dir"/slurm-prolog.sh \
    "$dir"/sbatch-sweep.sh "$dir"/slurm-rig.sh "$here"/*.sh "$here"/../slurm/*.sh
  echo "shellcheck: clean"
else
  echo "shellcheck not installed: parse checks only"
fi
python3 "$here/check_scripts.py" "$dir"
CHECK_NO_YAML=1 python3 "$here/check_scripts.py" "$dir"

