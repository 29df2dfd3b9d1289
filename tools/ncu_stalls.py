#!/usr/bin/env python3
"""Where a kernel's warps stall, from Nsight Compute's SASS source page.

    ncu --import REPORT.ncu-rep --page source --csv --print-source sass > K.csv
    python3 tools/ncu_stalls.py K.csv [--top 25] [--around INDEX[,INDEX...]]

Prints, per CSV, the total warp-stall samples by reason and the instructions
with the most samples (row index, samples, share, SASS, top two reasons);
--around prints the rows near the given indexes with their samples and
execution counts, e.g. the load whose register a stalled instruction waits
on. A CSV may be xz-compressed (.xz). This is how the consumer-cap session
(tools/benchmarks/h200_2026-12-07_consumer_cap/) read the producer's waits.
"""
import argparse
import collections
import csv
import io
import lzma


def load(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        rows = list(csv.reader(io.StringIO(f.read())))
    # Row 0 names the kernel; row 1 holds the column names.
    return rows[1], rows[2:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--around", default="")
    args = parser.parse_args()
    for path in args.csv:
        header, data = load(path)
        samples = header.index("Warp Stall Sampling (All Samples)")
        source = header.index("Source")
        executed = header.index("Instructions Executed")
        reasons = [(i, h) for i, h in enumerate(header)
                   if h.startswith("stall_") and "Not Issued" not in h]
        count = lambda row, i: int(row[i] or 0)
        total = sum(count(r, samples) for r in data)
        by_reason = collections.Counter()
        for row in data:
            for i, name in reasons:
                by_reason[name] += count(row, i)
        print(f"{path}: {total} samples, "
              f"{sum(count(r, executed) for r in data)} warp instructions executed")
        for name, n in by_reason.most_common(12):
            print(f"  {name:24s} {n:8d} {100 * n / max(total, 1):5.1f}%")
        ranked = sorted(range(len(data)), key=lambda j: -count(data[j], samples))
        for j in ranked[:args.top]:
            row = data[j]
            top2 = sorted(((count(row, i), name) for i, name in reasons), reverse=True)[:2]
            print(f"  {j:5d} {count(row, samples):6d} {100 * count(row, samples) / max(total, 1):5.1f}% "
                  f"{row[source].strip()[:60]:60s} {top2}")
        for index in filter(None, args.around.split(",")):
            center = int(index)
            print(f"  -- rows around {center} (samples, executed, SASS)")
            for j in range(max(center - 12, 0), min(center + 4, len(data))):
                row = data[j]
                print(f"  {j:5d} {count(row, samples):6d} {count(row, executed):9d} "
                      f"{row[source].strip()[:90]}")


if __name__ == "__main__":
    main()
