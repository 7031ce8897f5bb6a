#!/bin/sh
# Resource figures of the readers (issue 25, part 4):
#  - peak resident memory of `dlcomm report` on a run.json of ROWS rows
#    (a real 2-rank row repeated, its size varied) against the file's size;
#  - wall time of `dlcomm compare --html` (and without --html) on two
#    nccl-tests text logs of 100,000 / 200,000 / 500,000 sizes (200k / 400k /
#    1M row pairs), the new one 50% slower (every pair a regression).
#   scripts/bench-limits.sh [DLCOMM] [WORKDIR] [ROWS]
# Needs /usr/bin/time and a run folder to copy a row from (made by a 2-rank
# mpi sweep in WORKDIR). Uses about 1.5 GB of memory at the 1M-pair step;
# the files it writes (about 300 MB) are removed at the end.
set -eu
bin=${1:-build/dlcomm}
work=${2:-/tmp/dlcomm-bench-limits}
rows=${3:-100000}
mkdir -p "$work"
if [ ! -f "$work/seed/run.json" ]; then
    mpirun --allow-run-as-root --oversubscribe -np 2 "$bin" sweep --backend mpi -b 1K -e 1M \
        -c allreduce -q --out "$work/seed" --overwrite >/dev/null
fi
python3 - "$work" "$rows" <<'PY'
import json, sys
work, n = sys.argv[1], int(sys.argv[2])
doc = json.load(open(work + "/seed/run.json"))
row = doc["profiles"][0]["results"][0]
doc["profiles"][0]["results"] = []
head = json.dumps(doc, indent="\t")
cut = head.index('"results": []') + len('"results": [')
with open(work + "/big.json", "w") as f:
    f.write(head[:cut])
    for k in range(n):
        row["bytes"] = row["bytes_requested"] = 4 * (k + 1)
        f.write(("," if k else "") + json.dumps(row, indent="\t"))
    f.write(head[cut:])
hdr = ("# nccl-tests version 2.19.6 nccl-headers=22703 nccl-library=22703\n"
       "# Collective test starting: all_reduce_perf\n"
       "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 8(bytes) warmup iters: 5 iters: 20 "
       "agg iters: 1 validation: 1 graph: 0 unalign: 0\n#\n# Using devices\n"
       "#  Rank  0 Group  0 Pid   4000 on      nodeA device  0 [0000:18:00] NVIDIA H100\n"
       "#  Rank  1 Group  0 Pid   4001 on      nodeA device  1 [0000:19:00] NVIDIA H100\n#\n"
       "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
       "     time   algbw   busbw  #wrong\n")
for sizes in (100000, 200000, 500000):
    for tag, scale in (("a", 1.0), ("b", 1.5)):
        with open("%s/nt%d%s.txt" % (work, sizes, tag), "w") as f:
            f.write(hdr)
            for k in range(sizes):
                size = 8 * (k + 1)
                t = (8 + size / 1e5) * scale
                bw = size / t / 1e3
                f.write("%12d  %12d  %8s  %6s  %6i  %7.2f  %6.2f  %6.2f  %6g  %7.2f  %6.2f  %6.2f"
                        "  %6g\n" % (size, size // 4, "float", "sum", -1, t, bw, bw, 0, t, bw, bw, 0))
PY
size=$(stat -c %s "$work/big.json")
/usr/bin/time -f "%M" -o "$work/rss" "$bin" report "$work/seed/run.json" >/dev/null
small=$(cat "$work/rss")
/usr/bin/time -f "%M" -o "$work/rss" "$bin" report "$work/big.json" >/dev/null
big=$(cat "$work/rss")
echo "report of $rows rows: run.json $((size / 1048576)) MiB, peak resident $((big / 1024)) MiB" \
     "($((small / 1024)) MiB for a 22-row run): $(awk "BEGIN{printf \"%.2f\", ($big - $small) * 1024 / $size}")x the file"
for sizes in 100000 200000 500000; do
    for html in "" "--html $work/c.html"; do
        # shellcheck disable=SC2086 # html is two words or none
        /usr/bin/time -q -f "%e %M" -o "$work/t" "$bin" compare "$work/nt${sizes}a.txt" \
            "$work/nt${sizes}b.txt" $html >/dev/null || true
        echo "compare $((2 * sizes)) pairs${html:+ --html}: $(cut -d' ' -f1 "$work/t") s," \
             "$(($(cut -d' ' -f2 "$work/t") / 1024)) MiB"
    done
done
rm -f "$work"/big.json "$work"/nt*.txt "$work"/c.html "$work"/t "$work"/rss
