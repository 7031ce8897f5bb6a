#!/bin/sh
# The version scheme (packaging/version.cmake) on a repository of its own:
# before the first tag, on a tag, after it, and a modified tree. Each is a
# valid Debian version, they sort in the order they were made, and the
# built dlcomm's own version is one of them.
set -eu
. "$(dirname "$0")/common.sh"
command -v git >/dev/null || { echo "SKIP: git is not installed"; exit 77; }
R=$(mktemp -d /tmp/dlcomm-version.XXXXXX)
trap 'rm -rf "$R"' EXIT
version() { "$DL_CMAKE" -DSOURCE="$R" -DPROJECT=0.1.0 -P "$DL_SOURCE/packaging/version.cmake" 2>&1; }
valid() {
  dpkg --validate-version "$1" 2>/dev/null || fail "'$1' is not a valid Debian version"
  case "$1" in *-*) fail "'$1' has a '-': Debian would read a revision";; esac
}
git -C "$R" init -q && git -C "$R" config user.email t@t && git -C "$R" config user.name t
echo a > "$R/f" && git -C "$R" add f && git -C "$R" commit -qm one
h=$(git -C "$R" rev-parse --short=7 HEAD)
v1=$(version); [ "$v1" = "0.1.0~1.g$h" ] || fail "before any tag: '$v1', not 0.1.0~1.g$h"
echo b > "$R/f"
v2=$(version); [ "$v2" = "0.1.0~1.g$h.dirty" ] || fail "a modified tree: '$v2'"
git -C "$R" commit -qam two && git -C "$R" tag v0.1.0
v3=$(version); [ "$v3" = "0.1.0" ] || fail "on tag v0.1.0: '$v3', not 0.1.0"
echo c > "$R/f" && git -C "$R" commit -qam three
h=$(git -C "$R" rev-parse --short=7 HEAD)
v4=$(version); [ "$v4" = "0.1.0+1.g$h" ] || fail "a commit after v0.1.0: '$v4', not 0.1.0+1.g$h"
for v in "$v1" "$v2" "$v3" "$v4"; do valid "$v"; done
dpkg --compare-versions "$v1" lt "$v3" && dpkg --compare-versions "$v3" lt "$v4" ||
  fail "versions do not sort as made: $v1 < $v3 < $v4"
built=$("$DL_BUILD/dlcomm" version | sed -n '1s/^dlcomm //p')
valid "$built"
echo "ok: $v1, $v2, $v3, $v4; this build is $built"
