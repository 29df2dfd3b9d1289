"""Per-case summary of PA_TIMELINE dumps: CTA ends, the merging CTAs' write+merge, rehearsal."""
import glob, statistics as st, struct, sys
W = 160
def pct(v, q):
    v = sorted(v); return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]
for path in sorted(glob.glob(sys.argv[1] + '/*.bin')):
    d = open(path, 'rb').read(); w = struct.unpack('<%dQ' % (len(d) // 8), d)
    ev = w[512 * W] / 1000.0
    ctas = [w[c * W:(c + 1) * W] for c in range(512) if w[c * W] != 0]
    t0 = min(c[0] for c in ctas)
    ghz = st.median([(c[3] - c[1]) / (c[4] - c[0]) for c in ctas if c[4] > c[0]])
    us = lambda cyc: cyc / ghz / 1000.0
    ends = [(c[4] - t0) / 1000 for c in ctas]
    wm = sorted(((us(c[13] - c[12]), (c[4] - t0) / 1000, i) for i, c in enumerate(ctas) if c[13] and c[12]), reverse=True)
    first = [us(c[10] - c[1]) for c in ctas if c[10]]
    reh = [us(c[101] - c[96]) for c in ctas if c[101] and c[96]]
    seg0 = [us(c[8] - c[1]) for c in ctas if c[8]]
    fold = [us(c[12] - c[11]) for c in ctas if c[12] and c[11]]
    print(f"{path.split('/')[-1][:-4]}: event {ev:.1f} us; CTA end p10 {pct(ends,.1):.1f} p50 {pct(ends,.5):.1f} p90 {pct(ends,.9):.1f} max {max(ends):.1f}")
    print(f"   entry->first tile p50 {st.median(first):.2f} p90 {pct(first,.9):.2f}; entry->seg start {st.median(seg0):.2f}; fold p50 {st.median(fold):.2f}"
          + (f"; rehearsal p50 {st.median(reh):.2f} p90 {pct(reh,.9):.2f}" if reh else ""))
    print("   write+merge, slowest 8 (us, CTA end): " + " ".join(f"{a:.2f}@{b:.1f}" for a, b, _ in wm[:8]) + f"; median {st.median([a for a,_,_ in wm]):.2f}")
