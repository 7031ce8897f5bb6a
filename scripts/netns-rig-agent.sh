#!/bin/sh
# Open MPI's rsh agent for the netns rig: `netns-rig-agent.sh HOST COMMAND...`
# runs COMMAND inside network namespace HOST with its own UTS namespace whose
# hostname is HOST, so each namespace is a separate node to MPI.
#
# Open MPI hands its agent the remote command as ssh would (words meant for a
# remote shell, e.g. "PATH=...; export PATH; orted -mca ess env ..."), so the
# words are joined and parsed exactly once, as ssh's remote shell does. The
# host name is never spliced into shell text: it travels as a positional
# argument and is checked against the rig's naming first.
set -eu
if [ $# -lt 2 ]; then
  echo "usage: netns-rig-agent.sh HOST COMMAND..." >&2
  exit 2
fi
host=$1
shift
case $host in
  ''|*[!A-Za-z0-9_.-]*) echo "netns-rig-agent: bad host name" >&2; exit 2 ;;
esac
# shellcheck disable=SC2016 # $1 and $* are expanded by the inner shell
exec ip netns exec "$host" unshare --uts -- \
  sh -c 'hostname "$1" || exit 1; shift; eval "$*"' netns-rig-agent "$host" "$@"
