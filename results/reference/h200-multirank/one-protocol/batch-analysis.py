#!/usr/bin/env python3
"""Reads the batch traces packed in part4-2026-12-06b.tgz (every out-of-place
row up to 1 MiB of a one-GPU default sweep, timed in fixed 0.25 ms batches for
60 ms on an H100) and prints:

1. how the variance of a batch mean, times the batch's length, grows with the
   length (0.25 .. 8 ms), relative to 0.25 ms batches: 1.0 at every length
   for a host whose calls are independent; above 1 where the mean drifts over
   that time scale, and a batch-means interval of shorter batches is then
   narrower than the drift;
2. the packed replay.py's stop rule (today's batch plan) at CI targets of 2,
   3 and 5%: timed seconds of the 54 rows, stops, and how many converged
   intervals miss the row's 60 ms mean.

Usage: python3 batch-analysis.py [part4-2026-12-06b.tgz]
Standard library only."""
import collections
import os
import statistics
import sys
import tarfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
PACK = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "part4-2026-12-06b.tgz")
TRACES = "part4-2026-12-06b/batch-traces/"


def member(tar, name):
    return tar.extractfile(TRACES + name).read().decode()


def load(text):
    """(collective, bytes) -> [(calls, seconds)] per 0.25 ms batch, in order."""
    rows = collections.OrderedDict()
    for line in text.splitlines():
        coll, size, _place, _i, calls, secs = line.split()
        rows.setdefault((coll, int(size)), []).append((int(calls), float(secs)))
    return rows


def variance_time(rows, levels=(1, 2, 4, 8, 16, 32)):
    ratios = collections.defaultdict(list)
    for trace in rows.values():
        means = [s / c for c, s in trace]
        base = None
        for m in levels:
            groups = [statistics.mean(means[i:i + m]) for i in range(0, len(means) - m + 1, m)]
            v = statistics.variance(groups) * m
            base = v if base is None else base
            ratios[m].append(v / base)
    print("batch (ms)  var(mean) x length / that at 0.25 ms, over %d rows" % len(rows))
    print("            median   q25   q75   max")
    for m in levels:
        x = sorted(ratios[m])
        n = len(x)
        print("%8.2f    %6.2f %5.2f %5.2f %5.2f" % (m * 0.25, x[n // 2], x[n // 4],
                                                   x[3 * n // 4], x[-1]))


def targets(rows, replay):
    grand = {k: sum(s for _, s in v) / sum(c for c, _ in v) for k, v in rows.items()}
    print("\ntoday's plan (three 0.5 ms batches, then up to 5 ms), replayed per CI target")
    for target in (0.02, 0.03, 0.05):
        secs, stops, miss = 0.0, collections.Counter(), 0
        for k, trace in rows.items():
            _n, s, mean, ci, why = replay.replay(trace, 0.0005, 3, 0.005, target=target)
            secs += s
            stops[why] += 1
            miss += why == "ci" and abs(mean - grand[k]) > ci
        print("  %.0f%%: timed %.3f s, stops %s, converged intervals missing the 60 ms mean: %d"
              % (100 * target, secs, dict(sorted(stops.items())), miss))


def main():
    with tarfile.open(PACK) as tar:
        rows = load(member(tar, "fixed.txt"))
        replay = types.ModuleType("replay")
        exec(member(tar, "replay.py"), replay.__dict__)
    variance_time(rows)
    targets(rows, replay)


if __name__ == "__main__":
    main()
