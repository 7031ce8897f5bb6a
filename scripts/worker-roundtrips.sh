#!/bin/sh
# Socket messages between rank 0's supervisor and its worker, by type, for
# one sim case (8 B all-reduce, 2 ranks, -n N: N/10000 batches), read from
# strace's record of sendmsg (each message's 12-byte header is its first
# iovec). Two counts at two N give the round trips per batch:
#   ./scripts/worker-roundtrips.sh build/dlcomm 30000   # 3 batches
#   ./scripts/worker-roundtrips.sh build/dlcomm 90000   # 9 batches
# EXTRA="--split MOD:2" NP=4 for the --split path. Needs strace.
set -eu
BIN=$1; N=${2:-30000}; NP=${NP:-2}
root=""
[ "$(id -u)" -ne 0 ] || root="--allow-run-as-root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpirun $root --oversubscribe --bind-to none -np "$NP" sh -c "exec strace -f -qq -e trace=sendmsg \
  -s 16 -x -o $tmp/st.\$OMPI_COMM_WORLD_RANK $BIN sweep --backend sim --system h200-sxm-8 \
  -p default -c allreduce -d float32 -o sum --placement out -b 8 -e 8 -n $N -w 20 -q \
  --overwrite --out $tmp/run ${EXTRA:-}" >/dev/null 2>&1
python3 - "$tmp/st.0" <<'PY'
import collections, re, sys
# Wire version 5 (plan mode) and 6 (one protocol) number their types apart.
v5 = "HELLO CONFIG INFO BCAST_ID XC_MAX XC_SUM XC_GATHER RESULT DONE ERROR SV_OPEN SV_PREPARE " \
     "SV_RUN SV_CHECK SV_CLOSE XC_ALL_MAX XC_ALL_SUM".split()
v6 = "HELLO CONFIG BCAST_ID XC_MAX XC_SUM XC_GATHER DONE SV_OPEN SV_PREPARE SV_RUN SV_CHECK " \
     "SV_CLOSE".split()
c = collections.Counter()
for line in open(sys.argv[1]):
    m = re.search(r'sendmsg\((\d+), .*?iov_base="\\x44\\x4c\\x43\\x57\\x(..)\\x00\\x(..)\\x00', line)
    if m:
        names = v5 if int(m.group(2), 16) == 5 else v6
        who = "worker" if m.group(1) == "3" else "supervisor"
        c[who, names[int(m.group(3), 16) - 1]] += 1
for (who, name), n in sorted(c.items()):
    print("%-10s -> %-10s %d" % (who, name, n))
print("messages: %d" % sum(c.values()))
PY
