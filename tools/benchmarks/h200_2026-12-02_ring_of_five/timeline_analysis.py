"""Summarises the per-CTA timeline dumps of pa_timeline_*.patch builds.

Usage: python3 timeline_analysis.py DIR  (DIR holds the <case>_r<k>.bin dumps;
replay 1 of each case is summarised). Slots per CTA (160 words): 0 globaltimer
at entry (after the worker_begin loads), 1 clock at entry, 2 segments, 3 clock
at exit, 4 globaltimer at exit, 5 globaltimer at the kernel's first
instruction (pa_timeline_4f70709.patch; 0 in older dumps);
consumer segment i at 8 + 8i: start, query ready, first tile, own last tile,
fold end, write end, [after the first barrier, after the next query issue];
producer segment i at 104 + 4i: start, first tile issued, last tile issued,
[consumer loop top]. The last word is the replay's CUDA-event time in ns.
"""
import glob
import statistics as st
import struct
import sys

WORDS = 160


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


def summary(values):
    return f"{st.median(values):6.2f} (p90 {pct(values, .9):6.2f})" if values else "-"


for path in sorted(glob.glob(sys.argv[1] + '/*_r1.bin')):
    data = open(path, 'rb').read()
    w = struct.unpack('<%dQ' % (len(data) // 8), data)
    event_us = w[512 * WORDS] / 1000.0
    ctas = [w[c * WORDS:(c + 1) * WORDS] for c in range(512) if w[c * WORDS] != 0]
    t0 = min(c[0] for c in ctas)
    ghz = st.median([(c[3] - c[1]) / (c[4] - c[0]) for c in ctas if c[4] > c[0]])

    def us(cycles):
        return cycles / ghz / 1000.0

    starts = [c[5] for c in ctas if c[5]]
    t0 = min([t0] + starts)
    ends = [(c[4] - t0) / 1000 for c in ctas]
    entries = [(c[0] - t0) / 1000 for c in ctas]
    name = path.split('/')[-1].replace('_r1.bin', '').split('_BM_PagedAttention')[1]
    print(f"\n{name}: event {event_us:.1f} us, {len(ctas)} CTAs, clock {ghz:.2f} GHz, "
          f"segs/CTA max {max(c[2] for c in ctas)}")
    print(f"  CTA end: min {min(ends):.1f} p10 {pct(ends, .1):.1f} p50 {pct(ends, .5):.1f} "
          f"p90 {pct(ends, .9):.1f} max {max(ends):.1f}")
    if starts:
        print(f"  first instruction -> entry (worker_begin loaded): p50 "
              f"{pct([(c[0] - c[5]) / 1000 for c in ctas if c[5]], .5):.2f} us; "
              f"entry after the first CTA's first instruction: max {max(entries):.2f} us")
    parts = {k: [] for k in ('query', 'first tile', 'tile loop', 'fold', 'write+merge', 'boundary',
                             'this words', 'barrier 1', 'next words+query', 'wait+barrier 2',
                             'producer first issue', 'producer lead')}
    for c in ctas:
        segments = min(c[2], 12)  # the slot layout holds 12 segments
        # Consumer stamps of segments past 12 overwrite the producer's slots.
        producer_ok = c[2] <= 12
        for i in range(segments):
            b = 8 + 8 * i
            s = c[b:b + 8]
            if 0 in s[:6]:
                continue
            parts['query'].append(us(s[1] - s[0]))
            parts['first tile'].append(us(s[2] - s[1]))
            parts['tile loop'].append(us(s[3] - s[2]))
            parts['fold'].append(us(s[4] - s[3]))
            parts['write+merge'].append(us(s[5] - s[4]))
            if i + 1 < segments and c[b + 8 + 2]:
                parts['boundary'].append(us(c[b + 8 + 2] - s[3]))
            producer = c[104 + 4 * i:108 + 4 * i]
            if producer_ok and producer[3]:
                parts['this words'].append(us(s[0] - producer[3]))
            if s[6] and s[7]:
                parts['barrier 1'].append(us(s[6] - s[0]))
                parts['next words+query'].append(us(s[7] - s[6]))
                parts['wait+barrier 2'].append(us(s[1] - s[7]))
            if producer_ok and producer[0] and producer[1]:
                parts['producer first issue'].append(us(producer[1] - producer[0]))
            if producer_ok and i + 1 < segments and c[104 + 4 * (i + 1) + 1]:
                parts['producer lead'].append(us(s[3] - c[104 + 4 * (i + 1) + 1]))
    for key, values in parts.items():
        if values:
            print(f"  {key:22s} {summary(values)} us")
