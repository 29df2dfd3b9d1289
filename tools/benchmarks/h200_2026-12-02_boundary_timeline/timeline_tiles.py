"""Summarises the per-tile timeline dumps of pa_timeline_49e8e74.patch builds.

Usage: python3 timeline_tiles.py DIR  (DIR holds <case>_r<k>.bin; replays 1
and 2 of each case are summarised). Slots per CTA (552 words): 0 globaltimer
at entry, 1 clock at entry, 2 segments, 3 clock at the last consumer warp's
exit, 4 its globaltimer; tile g (the CTA's sequence, < 160): 8 + g the
producer's issue, 168 + g the consumer's full-wait return, 328 + g its
release; segment i (< 16) at 488 + 4 i: the producer's segment start, the
folder's fold start, write end, next-query issue end. The last word is the
replay's CUDA-event time in ns.
"""
import glob
import statistics as st
import struct
import sys

WORDS, TILES, STAGES = 552, 160, 4


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))] if values else float('nan')


def med(values):
    return st.median(values) if values else float('nan')


for path in sorted(glob.glob(sys.argv[1] + '/*_r[12].bin')):
    data = open(path, 'rb').read()
    w = struct.unpack('<%dQ' % (len(data) // 8), data)
    event_us = w[512 * WORDS] / 1000.0
    ctas = [w[c * WORDS:(c + 1) * WORDS] for c in range(512) if w[c * WORDS] != 0]
    ghz = med([(c[3] - c[1]) / (c[4] - c[0]) for c in ctas if c[4] > c[0]])
    t0 = min(c[0] for c in ctas)
    name = path.split('/')[-1].replace('.bin', '').split('_BM_PagedAttentionDecode_')[1]
    us = lambda cycles: cycles / ghz / 1000.0
    durations = [us(c[3] - c[1]) for c in ctas]
    entries = [(c[0] - t0) / 1000 for c in ctas]
    ends = [(c[4] - t0) / 1000 for c in ctas]
    rows = {k: [] for k in ('land interval inside', 'land interval boundary (first 4)',
                            'issue after release inside', 'issue after release boundary',
                            'latency inside', 'latency boundary', 'producer seg start after last issue',
                            'fold wait (last land -> fold start)', 'fold+write', 'query issue',
                            'first land after entry', 'last release -> exit')}
    tiles_per_cta = []
    for c in ctas:
        issue = [c[8 + g] for g in range(TILES)]
        land = [c[168 + g] for g in range(TILES)]
        done = [c[328 + g] for g in range(TILES)]
        n = sum(1 for g in range(TILES) if issue[g])
        tiles_per_cta.append(n)
        segs = c[2]
        per_seg = n // segs if segs else n
        starts = {per_seg * i for i in range(1, segs)}
        near = {g + k for g in starts for k in range(4)}
        for g in range(1, n):
            if not (land[g] and land[g - 1] and issue[g]):
                continue
            boundary = g in near
            rows['land interval boundary (first 4)' if boundary else 'land interval inside'].append(
                us(land[g] - land[g - 1]))
            rows['latency boundary' if boundary else 'latency inside'].append(us(land[g] - issue[g]))
            if g >= STAGES and done[g - STAGES]:
                rows['issue after release boundary' if boundary else 'issue after release inside'].append(
                    us(issue[g] - done[g - STAGES]))
        rows['first land after entry'].append(us(land[0] - c[1]))
        rows['last release -> exit'].append(us(c[3] - max(done[:n])))
        for i in range(min(segs, 16)):
            base = 488 + 4 * i
            last = per_seg * (i + 1) - 1
            if i > 0 and c[base] and issue[per_seg * i - 1]:
                rows['producer seg start after last issue'].append(us(c[base] - issue[per_seg * i - 1]))
            if c[base + 1] and last < n:
                rows['fold wait (last land -> fold start)'].append(us(c[base + 1] - land[last]))
                rows['fold+write'].append(us(c[base + 2] - c[base + 1]))
                rows['query issue'].append(us(c[base + 3] - c[base + 2]))
    print(f"\n{name}: event {event_us:.1f} us, {len(ctas)} CTAs, {ghz:.2f} GHz, tiles/CTA "
          f"{min(tiles_per_cta)}-{max(tiles_per_cta)}, segments/CTA {min(c[2] for c in ctas)}-{max(c[2] for c in ctas)}")
    print(f"  entry after first: p50 {pct(entries, .5):.2f} max {max(entries):.2f}; CTA duration "
          f"p10 {pct(durations, .1):.1f} p50 {pct(durations, .5):.1f} p90 {pct(durations, .9):.1f} max {max(durations):.1f}; "
          f"end p50 {pct(ends, .5):.1f} max {max(ends):.1f}")
    for k, v in rows.items():
        if v:
            print(f"  {k:40s} n {len(v):6d}  p10 {pct(v, .1):6.3f}  p50 {pct(v, .5):6.3f}  "
                  f"p90 {pct(v, .9):6.3f}  mean {st.mean(v):6.3f}")
