#!/usr/bin/env python3
"""Joins the probe's per-case wall-clock stamps (stderr: 'stamp T begin|end NAME')
with nvidia-smi's samples (smi.csv, -lms 50) and prints each case's median
time beside the SM clock, power and temperatures sampled while it ran.

  python3 clock_table.py DIR    (DIR holds ab_*_N.json, ab_*_N.err, smi.csv)
"""
import csv, datetime, glob, json, os, re, statistics, sys


def smi_samples(path):
    rows = []
    with open(path) as f:
        reader = csv.reader(f)
        header = [h.strip() for h in next(reader)]
        for row in reader:
            if len(row) != len(header):
                continue
            r = dict(zip(header, (x.strip() for x in row)))
            try:
                t = datetime.datetime.strptime(r["timestamp"], "%Y/%m/%d %H:%M:%S.%f")
            except ValueError:
                continue
            t = t.replace(tzinfo=datetime.timezone.utc).timestamp()
            num = lambda key: float(re.sub(r"[^0-9.]", "", r[key]) or "nan")
            # (newer drivers name the fields clocks.current.sm, clocks_event_reasons)
            pick = lambda *keys: next(k for k in keys if k in r)
            rows.append((t, num(pick("clocks.sm [MHz]", "clocks.current.sm [MHz]")),
                         num("power.draw [W]"), num("temperature.gpu"), num("temperature.memory"),
                         r[pick("clocks_throttle_reasons.active", "clocks_event_reasons.active")]))
    return rows


def main(d):
    samples = smi_samples(os.path.join(d, "smi.csv"))
    print(f"{'process':12} {'case':70} {'us':>7} {'MHz':>6} {'W':>6} {'gpuC':>5} {'memC':>5} reasons")
    for err in sorted(glob.glob(os.path.join(d, "ab_*_*.err")), key=lambda p: int(p.rsplit("_", 1)[1][:-4])):
        tag = os.path.basename(err)[3:-4]
        times = {}
        with open(err[:-4] + ".json") as f:
            for b in json.load(f)["benchmarks"]:
                if b.get("aggregate_name") == "median":
                    times[b["run_name"].rsplit("/iterations", 1)[0]] = b["real_time"]
        begin = {}
        for line in open(err):
            parts = line.split()
            if len(parts) == 4 and parts[0] == "stamp":
                t, what, name = float(parts[1]), parts[2], parts[3]
                if what == "begin":
                    begin.setdefault(name, t)  # the first repetition's begin
                else:
                    begin[name + "#end"] = t
        for name, us in times.items():
            if name not in begin:
                continue
            t0, t1 = begin[name], begin.get(name + "#end", begin[name])
            inside = [s for s in samples if t0 <= s[0] <= t1]
            if not inside:
                continue
            med = lambda i: statistics.median(s[i] for s in inside)
            reasons = sorted({s[5] for s in inside})
            short = name.replace("BM_PagedAttention", "").replace("heads:32_8/hd:128/", "")
            print(f"{tag:12} {short[:70]:70} {us:7.1f} {med(1):6.0f} {med(2):6.0f} {med(3):5.0f} "
                  f"{med(4):5.0f} {','.join(reasons)}")


if __name__ == "__main__":
    main(sys.argv[1])
