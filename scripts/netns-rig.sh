#!/bin/bash
# A multi-host test rig on one Linux machine, without GPUs: each "host" is a
# network namespace (dlh1..dlhN) with its own hostname, joined by a Linux
# bridge, so Open MPI sees N nodes and talks TCP between them. Needs root.
#
#   netns-rig.sh up N              create hosts dlh1..dlhN (N >= 2)
#   netns-rig.sh down              remove them, the bridge and /etc/hosts lines
#   netns-rig.sh throttle HOST RATE  limit HOST's link both ways (tc tbf, e.g. 200mbit)
#   netns-rig.sh throttle-link A B RATE  limit only the traffic between A and B
#   netns-rig.sh unthrottle HOST
#   netns-rig.sh mpirun ARGS...    mpirun across the rig (2 slots per host, or ARGS' hosts)
#   netns-rig.sh check             exit 0 when namespaces can be made here
#
# Environment: DLRIG_PREFIX (dlh), DLRIG_NET (first three octets, 10.213.77),
# DLRIG_SLOTS (2). Addresses: host i is NET.i, the bridge NET.254, on that
# bridge only (nothing is routed or NATed). /etc/hosts gets one line per host,
# marked, and loses exactly those lines on `down`.
set -euo pipefail

PREFIX=${DLRIG_PREFIX:-dlh}
NET=${DLRIG_NET:-10.213.77}
SLOTS=${DLRIG_SLOTS:-2}
BR=${PREFIX}br0
STATE=/run/dlcomm-netns-rig-$PREFIX
MARK="# dlcomm-netns-rig $PREFIX"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AGENT=$HERE/netns-rig-agent.sh

die() { echo "netns-rig: $*" >&2; exit 2; }

usage() { sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

need_root() {
  [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, bridge, tc)"
  command -v ip >/dev/null || die "ip not found: apt-get install iproute2"
}

# Rewrites /etc/hosts in place (not by rename: it is often a bind mount).
hosts_strip() {
  local kept
  kept=$(grep -vF -- "$MARK" /etc/hosts || true)
  printf '%s\n' "$kept" > /etc/hosts
}

cmd_check() {
  need_root
  local probe=${PREFIX}probe$$
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "netns-rig: 'ip netns add' is not permitted here" >&2
    exit 1
  fi
  ip netns del "$probe"
  command -v unshare >/dev/null || { echo "netns-rig: unshare not found" >&2; exit 1; }
}

cmd_down() {
  need_root
  local n
  local p
  for n in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${PREFIX}[0-9]+$" || true); do
    # What still runs in a host (an orted whose mpirun was killed) would keep
    # the namespace alive after `ip netns del` and wait forever.
    for p in $(ip netns pids "$n" 2>/dev/null); do
      kill -KILL "$p" 2>/dev/null || true
    done
    ip netns del "$n" 2>/dev/null || true
  done
  ip link del "$BR" 2>/dev/null || true
  for n in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' \
             | grep -E "^${PREFIX}v[0-9]+$" || true); do
    ip link del "$n" 2>/dev/null || true
  done
  if grep -qF -- "$MARK" /etc/hosts 2>/dev/null; then hosts_strip; fi
  rm -rf "$STATE"
}

cmd_up() {
  local n=${1:-}
  if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 2 ] || [ "$n" -gt 200 ]; then
    die "up N: N must be 2..200"
  fi
  need_root
  cmd_down
  mkdir -p "$STATE"
  cp /etc/hosts "$STATE/hosts.orig"
  # A half-built rig is torn down rather than left behind.
  trap 'cmd_down; exit 1' ERR
  ip link add "$BR" type bridge
  ip addr add "$NET.254/24" dev "$BR"
  ip link set "$BR" up
  : > "$STATE/hostfile"
  local i h
  for ((i = 1; i <= n; i++)); do
    h=$PREFIX$i
    ip netns add "$h"
    ip link add "${PREFIX}v$i" type veth peer name eth0 netns "$h"
    ip link set "${PREFIX}v$i" master "$BR" up
    ip -n "$h" addr add "$NET.$i/24" dev eth0
    ip -n "$h" link set eth0 up
    ip -n "$h" link set lo up
    printf '%s %s %s\n' "$NET.$i" "$h" "$MARK" >> /etc/hosts
    printf '%s slots=%s\n' "$h" "$SLOTS" >> "$STATE/hostfile"
  done
  trap - ERR
  echo "$n" > "$STATE/count"
  echo "netns-rig: $n hosts ${PREFIX}1..${PREFIX}$n on $BR ($NET.0/24); hostfile $STATE/hostfile"
}

host_index() {
  local h=$1
  [[ $h =~ ^${PREFIX}([0-9]+)$ ]] || die "unknown host '$h' (hosts are ${PREFIX}1..)"
  ip netns list | awk '{print $1}' | grep -qx "$h" || die "host '$h' is not up"
  echo "${BASH_REMATCH[1]}"
}

# tbf limits egress only: one qdisc on each end of the veth limits both ways.
cmd_throttle() {
  [ $# -eq 2 ] || die "throttle HOST RATE (e.g. 200mbit)"
  need_root
  local i
  i=$(host_index "$1")
  local args=(root tbf rate "$2" burst 32kbit latency 400ms)
  tc qdisc replace dev "${PREFIX}v$i" "${args[@]}"
  ip netns exec "$1" tc qdisc replace dev eth0 "${args[@]}"
}

# Only A<->B: an htb class at RATE, chosen by a u32 match on the peer's
# address, on each end (prio and netem are not available everywhere).
cmd_throttle_link() {
  [ $# -eq 3 ] || die "throttle-link A B RATE"
  need_root
  local ia ib
  ia=$(host_index "$1")
  ib=$(host_index "$2")
  link_class "$1" "$NET.$ib" "$3"
  link_class "$2" "$NET.$ia" "$3"
}

link_class() {
  local ns=$1 peer=$2 rate=$3
  ip netns exec "$ns" tc qdisc replace dev eth0 root handle 1: htb default 10
  ip netns exec "$ns" tc class add dev eth0 parent 1: classid 1:10 htb rate 100gbit quantum 60000
  ip netns exec "$ns" tc class add dev eth0 parent 1: classid 1:20 htb rate "$rate" ceil "$rate" quantum 1514
  ip netns exec "$ns" tc filter add dev eth0 parent 1: protocol ip prio 1 u32 \
    match ip dst "$peer/32" flowid 1:20
}

cmd_unthrottle() {
  [ $# -eq 1 ] || die "unthrottle HOST"
  need_root
  local i
  i=$(host_index "$1")
  tc qdisc del dev "${PREFIX}v$i" root 2>/dev/null || true
  ip netns exec "$1" tc qdisc del dev eth0 root 2>/dev/null || true
}

# Ranks of one host share its namespace and /dev/shm, so vader works inside a
# host; between hosts only TCP over the bridge is possible. Each host binds
# its ranks to cores 0, 1, ...: unbound, two ranks of a host can share one
# core for seconds and look like a slow node. The orteds stay attached to
# their agent instead of daemonizing (Open MPI does so without tree spawn),
# so a killed mpirun takes them along.
# A caller that names its hosts (--hostfile, --host: a Slurm prolog's job
# nodes) gets those instead of every rig host.
cmd_mpirun() {
  [ -f "$STATE/hostfile" ] || die "the rig is not up (netns-rig.sh up N)"
  local root=() hosts=(--hostfile "$STATE/hostfile") a
  [ "$(id -u)" -ne 0 ] || root=(--allow-run-as-root)
  for a in "$@"; do
    case $a in --hostfile|--hostfile=*|--host|--host=*|-H|--machinefile) hosts=() ;; esac
  done
  exec mpirun "${root[@]}" "${hosts[@]}" \
    --mca plm_rsh_agent "$AGENT" --mca plm_rsh_no_tree_spawn 1 --mca orte_leave_session_attached 1 \
    --mca oob_tcp_if_include "$NET.0/24" --mca btl_tcp_if_include "$NET.0/24" \
    --mca btl tcp,vader,self --mca mpi_yield_when_idle 1 --bind-to core "$@"
}

case ${1:-} in
  up) shift; cmd_up "$@" ;;
  down) cmd_down ;;
  throttle) shift; cmd_throttle "$@" ;;
  throttle-link) shift; cmd_throttle_link "$@" ;;
  unthrottle) shift; cmd_unthrottle "$@" ;;
  mpirun) shift; cmd_mpirun "$@" ;;
  check) cmd_check ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
