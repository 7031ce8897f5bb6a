#!/bin/sh
# The .deb as an operator finds it, without installing it: its version is
# `dlcomm version`'s, it recommends bash-completion, names no placeholder
# homepage, and ships the monitoring examples (whose promtool test passes
# where they are installed), the documentation and every man page.
set -eu
. "$(dirname "$0")/common.sh"
command -v dpkg-deb >/dev/null || { echo "SKIP: not a Debian system"; exit 77; }
D=$(mktemp -d /tmp/dlcomm-package.XXXXXX)
trap 'rm -rf "$D"' EXIT
(cd "$DL_BUILD" && "$DL_CPACK" -G DEB -B "$D" >/dev/null) || fail "cpack -G DEB exited $?"
deb=$(ls "$D"/dlcomm_*.deb)
field() { dpkg-deb -f "$deb" "$1"; }
v=$("$DL_BUILD/dlcomm" version | sed -n '1s/^dlcomm //p')
[ "$(field Version)" = "$v" ] || fail "the package's version $(field Version) is not dlcomm version's $v"
[ "$(basename "$deb")" = "dlcomm_${v}_$(field Architecture).deb" ] || fail "file name $(basename "$deb")"
field Recommends | grep -qw bash-completion || fail "Recommends: '$(field Recommends)' lacks bash-completion"
if field Homepage | grep -q .; then
  field Homepage | grep -qv 'example\.invalid' || fail "Homepage is a placeholder: $(field Homepage)"
fi
dpkg-deb -x "$deb" "$D/x"
S=$D/x/usr/share
zcat "$S/doc/dlcomm/changelog.gz" | head -1 | grep -qF "dlcomm ($v)" ||
  fail "the changelog's version: $(zcat "$S/doc/dlcomm/changelog.gz" | head -1)"
for f in dlcomm-rules.yml dlcomm-rules.test.yml dlcomm-dashboard.json; do
  cmp -s "$S/dlcomm/monitoring/$f" "$DL_SOURCE/scripts/monitoring/$f" ||
    fail "share/dlcomm/monitoring/$f is not scripts/monitoring/$f"
done
if command -v promtool >/dev/null; then
  (cd "$S/dlcomm/monitoring" && promtool test rules dlcomm-rules.test.yml >/dev/null) ||
    fail "promtool test rules fails in the installed monitoring folder"
fi
for f in "$DL_SOURCE"/README.md "$DL_SOURCE"/docs/*.md; do
  rel=${f#"$DL_SOURCE"/}
  cmp -s "$f" "$S/doc/dlcomm/$rel" || fail "share/doc/dlcomm/$rel is not shipped as $rel"
done
for cmd in "" $("$DL_BUILD/dlcomm" __complete commands); do
  page=dlcomm${cmd:+-$cmd}.1.gz
  [ -s "$S/man/man1/$page" ] || fail "share/man/man1/$page is not shipped"
done
echo "ok: $(basename "$deb"): version, Recommends, monitoring, docs, man pages"
