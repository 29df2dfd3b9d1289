"""Lane drift in 32/32 decode: per request, the spread (max - min over its KV
heads' workers) of the time its unit starts, from pa_timeline_drift.patch dumps.

Usage: python3 drift.py DIR. Per CTA (552 words): 0 globaltimer at entry, 1
clock at entry, 3 clock at exit, 4 globaltimer at exit; segment i (< 16) at
488 + 4 i: the producer's segment start (clock). The plan file gives each
worker's segments as request:kv_head:key_begin:key_end. Clocks are turned into
global ns per CTA with the CTA's own clock rate ((clock exit - clock entry) /
(global exit - global entry)). Replays r1 and r2 (r0 warms up)."""
import glob
import statistics as st
import struct
import sys
from collections import defaultdict

WORDS = 552


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


for plan_path in sorted(glob.glob(sys.argv[1] + '/*_plan.txt')):
    plan = {}
    for line in open(plan_path):
        parts = line.split()
        plan[int(parts[0])] = [tuple(int(x) for x in p.split(':')) for p in parts[1:]]
    base = plan_path[:-len('_plan.txt')]
    name = base.split('_BM_PagedAttentionDecode_')[1]
    segs = [len(v) for v in plan.values() if v]
    print(f"\n{name}: {len(segs)} workers, {min(segs)}-{max(segs)} units per worker")
    for rep in (1, 2):
        data = open(f'{base}_r{rep}.bin', 'rb').read()
        w = struct.unpack('<%dQ' % (len(data) // 8), data)
        event_us = w[512 * WORDS] / 1000.0
        starts = {}  # (request, head) -> global ns
        t0 = None
        ends = []
        for cta, units in plan.items():
            c = w[cta * WORDS:(cta + 1) * WORDS]
            if c[0] == 0 or c[4] <= c[0]:
                continue
            ghz = (c[3] - c[1]) / (c[4] - c[0])
            t0 = c[0] if t0 is None else min(t0, c[0])
            ends.append(c[4])
            for i, (req, head, _, _) in enumerate(units[:16]):
                clock = c[488 + 4 * i]
                if clock:
                    starts[(req, head)] = c[0] + (clock - c[1]) / ghz
        by_request = defaultdict(list)
        for (req, head), t in starts.items():
            by_request[req].append(t)
        # index of the request in its worker's sequence (the same for every head)
        position = {}
        for units in plan.values():
            for i, (req, head, _, _) in enumerate(units):
                position[req] = i
        rows = defaultdict(list)
        for req, ts in by_request.items():
            if len(ts) < 2:
                continue
            rows[position[req]].append(((min(ts) - t0) / 1000, (max(ts) - min(ts)) / 1000,
                                        (st.median(ts) - min(ts)) / 1000))
        print(f"  replay {rep}: event {event_us:.1f} us, CTAs end p50 {(st.median(ends) - t0) / 1000:.1f}"
              f" max {(max(ends) - t0) / 1000:.1f} us after the first entry")
        print(f"    {'unit':>4s} {'start (us)':>10s} {'spread p50':>10s} {'p90':>6s} {'max':>6s} {'median lag p50':>14s}")
        for i in sorted(rows):
            r = rows[i]
            print(f"    {i:4d} {st.median(x[0] for x in r):10.1f} {st.median(x[1] for x in r):10.2f}"
                  f" {pct([x[1] for x in r], .9):6.2f} {max(x[1] for x in r):6.2f}"
                  f" {st.median(x[2] for x in r):14.2f}")
