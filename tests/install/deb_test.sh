#!/bin/sh
# The .deb as a user installs it: dpkg -i (apt-get for missing Depends),
# /usr/bin/dlcomm run from /, then purged so the machine is left as found.
set -eu
. "$(dirname "$0")/common.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: dpkg -i needs root (CI runs as root)"; exit 77; }
command -v dpkg >/dev/null || { echo "SKIP: not a Debian system"; exit 77; }
if dpkg-query -W -f='${Status}' dlcomm 2>/dev/null | grep -q "ok installed"; then
  echo "SKIP: a dlcomm package is already installed here; not replacing it"; exit 77
fi
D=$(mktemp -d /tmp/dlcomm-deb.XXXXXX)
trap 'dpkg --purge dlcomm >/dev/null 2>&1 || true; rm -rf "$D"' EXIT
(cd "$DL_BUILD" && "$DL_CPACK" -G DEB -B "$D" >/dev/null) || fail "cpack -G DEB exited $?"
deb=$(ls "$D"/dlcomm_*.deb)
if ! dpkg -i "$deb" >"$D/dpkg.log" 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -f -y -qq >>"$D/dpkg.log" 2>&1 ||
    { cat "$D/dpkg.log"; fail "dpkg -i $deb: dependencies not installable"; }
fi
[ -x /usr/bin/dlcomm ] || fail "/usr/bin/dlcomm not installed"
profiles_from /usr/bin/dlcomm /usr/share/dlcomm/profiles
sim_sweep /usr/bin/dlcomm default,p2p-off "$D/run"
command -v man >/dev/null || fail "man is missing (scripts/install-deps.sh installs man-db)"
for cmd in "" $(/usr/bin/dlcomm __complete commands); do
  page=dlcomm${cmd:+-$cmd}
  if [ -e /usr/share/man/man1/$page.1.gz ]; then
    man -w "$page" | grep -qx "/usr/share/man/man1/$page.1.gz" || fail "man -w $page: $(man -w "$page" 2>&1)"
  elif grep -qs "path-exclude.*/usr/share/man" /etc/dpkg/dpkg.cfg.d/*; then
    # A container image that drops man pages on install (dpkg path-exclude):
    # the page must still be in the package and render.
    [ -d "$D/x" ] || dpkg-deb -x "$deb" "$D/x"
    man -l "$D/x/usr/share/man/man1/$page.1.gz" >/dev/null 2>&1 || fail "the packaged $page(1) does not render"
    [ -n "$cmd" ] || echo "note: dpkg here excludes /usr/share/man; checked the packaged pages with man -l"
  else
    fail "/usr/share/man/man1/$page.1.gz not installed"
  fi
done
(cd / && dlcomm version) | grep -q "^dlcomm " || fail "dlcomm version"
dpkg --purge dlcomm >/dev/null || fail "dpkg --purge dlcomm"
[ ! -e /usr/bin/dlcomm ] || fail "/usr/bin/dlcomm left after purge"
echo "ok: $(basename "$deb") installed, ran from /, purged"
