#!/bin/sh
# cmake --install into a temporary prefix: the program, its profiles,
# systems, man pages and completion, found from there and run from /.
set -eu
. "$(dirname "$0")/common.sh"
P=$(mktemp -d /tmp/dlcomm-prefix.XXXXXX)
trap 'rm -rf "$P"' EXIT
"$DL_CMAKE" --install "$DL_BUILD" --prefix "$P/usr" >/dev/null || fail "cmake --install exited $?"
for f in bin/dlcomm share/dlcomm/profiles/default.json share/dlcomm/systems/h200-sxm-8.json \
         share/man/man1/dlcomm.1.gz share/bash-completion/completions/dlcomm \
         share/dlcomm/scripts/slurm-prolog.sh share/dlcomm/scripts/netns-rig.sh \
         share/dlcomm/monitoring/dlcomm-rules.yml share/dlcomm/monitoring/dlcomm-dashboard.json \
         share/dlcomm/schema/run.schema.json share/dlcomm/schema/preflight.schema.json \
         share/doc/dlcomm/README.md share/doc/dlcomm/docs/sweep.md; do
  [ -e "$P/usr/$f" ] || fail "cmake --install did not install $f"
done
profiles_from "$P/usr/bin/dlcomm" "$P/usr/share/dlcomm/profiles"
sim_sweep "$P/usr/bin/dlcomm" default,p2p-off,socket "$P/run"
(cd / && "$P/usr/bin/dlcomm" sweep --backend sim --system h200-sxm-8 -p default -b 8 -e 8 -q \
   --out "$P/run2" -n 1 -w 0) || fail "--system h200-sxm-8 not found from the prefix"
command -v man >/dev/null || fail "man is missing (scripts/install-deps.sh installs man-db)"
# dlcomm(1) and a page per command, each found by man; each command's page
# documents what its --help says: every option is in both.
for cmd in "" $("$P/usr/bin/dlcomm" __complete commands); do
  page=dlcomm${cmd:+-$cmd}
  MANPATH="$P/usr/share/man" man -w "$page" | grep -qx "$P/usr/share/man/man1/$page.1.gz" ||
    fail "man -w $page does not find the installed page"
  [ -n "$cmd" ] || continue
  for o in $("$P/usr/bin/dlcomm" __complete options "$cmd" | grep '^-'); do
    zcat "$P/usr/share/man/man1/$page.1.gz" | sed 's/\\-/-/g; s/\\f[BIR]//g' | grep -q -- "$o" ||
      fail "$page(1) lacks option $o"
  done
done
# Completion: subcommands, a command's options, profile names.
bash -c ". '$P/usr/share/bash-completion/completions/dlcomm'
  COMP_WORDS=('$P/usr/bin/dlcomm' sweep -p p2p); COMP_CWORD=3; _dlcomm
  printf '%s\n' \"\${COMPREPLY[@]}\"" | grep -qx "p2p-off" || fail "completion of -p p2p"
bash -c ". '$P/usr/share/bash-completion/completions/dlcomm'
  COMP_WORDS=('$P/usr/bin/dlcomm' pre); COMP_CWORD=1; _dlcomm
  printf '%s\n' \"\${COMPREPLY[@]}\"" | grep -qx "preflight" || fail "completion of a command"
# Under a prefix, bash-completion finds the completion where docs/install.md
# says: with PREFIX/share in XDG_DATA_DIRS, its loader sources it on first use.
BC=/usr/share/bash-completion/bash_completion
[ -r "$BC" ] || fail "bash-completion is missing (scripts/install-deps.sh installs it)"
XDG_DATA_DIRS="$P/usr/share:/usr/local/share:/usr/share" PATH="$P/usr/bin:$PATH" bash -c ". '$BC'
  _completion_loader dlcomm; complete -p dlcomm | grep -q _dlcomm || exit 1
  COMP_WORDS=(dlcomm pre); COMP_CWORD=1; _dlcomm
  printf '%s\n' \"\${COMPREPLY[@]}\"" | grep -qx "preflight" ||
  fail "bash-completion does not load $P/usr/share/bash-completion/completions/dlcomm through XDG_DATA_DIRS"
# The program alone, away from any data folder: `default` is built in, any
# other profile is one line and exit 2.
mkdir -p "$P/lone" && cp "$P/usr/bin/dlcomm" "$P/lone/"
(cd / && "$P/lone/dlcomm" profiles) | grep -q "^# searched: (no folder found" ||
  fail "a lone dlcomm claims a data folder"
(cd / && $DL_MPIRUN -np 2 "$P/lone/dlcomm" sweep --backend sim -p default -b 8 -e 8 -n 1 -w 0 -q \
   --system "$DL_SOURCE/topologies/systems/h200-sxm-8.json" --out "$P/run3") ||
  fail "a lone dlcomm cannot run the built-in default profile"
rc=0
(cd / && "$P/lone/dlcomm" sweep --backend sim -p p2p-off --out "$P/run4" 2>"$P/err") || rc=$?
[ "$rc" -eq 2 ] && grep -q "profile 'p2p-off': no such file" "$P/err" && [ ! -e "$P/run4" ] ||
  fail "a missing profile: exit $rc, $(cat "$P/err")"
echo "ok: installed to $P/usr and ran from /"
