#!/bin/sh
# The Debian package has no lintian error.
set -eu
. "$(dirname "$0")/common.sh"
command -v lintian >/dev/null || { echo "SKIP: lintian is not installed (scripts/install-deps.sh installs it)"; exit 77; }
D=$(mktemp -d /tmp/dlcomm-lintian.XXXXXX)
trap 'rm -rf "$D"' EXIT
(cd "$DL_BUILD" && "$DL_CPACK" -G DEB -B "$D" >/dev/null) || fail "cpack -G DEB exited $?"
deb=$(ls "$D"/dlcomm_*.deb)
out=$(lintian "$deb" 2>&1 | grep -v "running with root privileges") || true
echo "$out"
echo "$out" | grep -q "^E:" && fail "lintian errors on $deb"
echo "ok: lintian has no error on $(basename "$deb")"
