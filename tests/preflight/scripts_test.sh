#!/bin/bash
# The scripts around preflight.
#   scripts_test.sh syntax SCRIPTS_DIR
#     every shell script parses (sh -n / bash -n by its shebang) and passes
#     passes ShellCheck when installed; the MPIJob manifest and the Containerfile
#     pass check_scripts.py (with and without PyYAML).
#   scripts_test.sh prolog SCRIPTS_DIR DLCOMM
#     the Slurm prolog runs preflight on this host (scontrol stands in for
#     Slurm, which is not here): healthy, exit 0 and nothing drained; one
#     rank's results corrupted, exit 1 and exactly this host drained.
set -euo pipefail
mode=$1 dir=$2
here=$(cd "$(dirname "$0")" && pwd)

if [ "$mode" = syntax ]; then
  for f in "$dir"/*.sh; do
    case $(head -1 "$f") in
      *bash*) bash -n "$f" ;;
      *) sh -n "$f" ;;
    esac
    echo "parses: $f"
  done
  if command -v shellcheck > /dev/null; then
    shellcheck "$dir"/netns-rig.sh "$dir"/netns-rig-agent.sh "$dir"/slurm-prolog.sh \
      "$dir"/sbatch-sweep.sh "$here"/*.sh
    echo "shellcheck: clean"
  else
    echo "shellcheck not installed: parse checks only"
  fi
  python3 "$here/check_scripts.py" "$dir"
  CHECK_NO_YAML=1 python3 "$here/check_scripts.py" "$dir"
  exit 0
fi

bin=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
cat > "$work/bin/scontrol" <<'SH'
#!/bin/sh
case $1 in
  show) hostname ;;
  update) echo "$*" >> "$SCONTROL_LOG" ;;
  *) exit 1 ;;
esac
SH
chmod +x "$work/bin/scontrol"
export SCONTROL_LOG=$work/scontrol.log SCONTROL=$work/bin/scontrol
SLURM_JOB_NODELIST=$(hostname)
export SLURM_JOB_ID=42 SLURM_JOB_NODELIST
export DLCOMM_BIN=$bin DLCOMM_RANKS_PER_NODE=2 DLCOMM_PREFLIGHT_DIR=$work/log
export DLCOMM_PREFLIGHT_ARGS="--sizes 64K --check-size 64K --scope-size 64K --scopes node"
: > "$SCONTROL_LOG"

"$dir/slurm-prolog.sh"
[ ! -s "$SCONTROL_LOG" ] || { echo "healthy: drained"; cat "$SCONTROL_LOG"; exit 1; }
grep -q '^VERDICT PASS' "$work/log/preflight-42.log"

set +e
DLCOMM_INJECT=corrupt:1 "$dir/slurm-prolog.sh"
rc=$?
set -e
cat "$work/log/preflight-42.log"
[ "$rc" -eq 1 ] || { echo "corrupt: prolog exit $rc, expected 1"; exit 1; }
cat "$SCONTROL_LOG"
[ "$(wc -l < "$SCONTROL_LOG")" -eq 1 ]
grep -q "^update nodename=$(hostname) state=drain reason=dlcomm preflight failed (job 42" "$SCONTROL_LOG"
