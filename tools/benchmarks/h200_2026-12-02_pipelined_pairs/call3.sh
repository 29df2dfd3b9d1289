#!/usr/bin/env bash
# Third call of 2026-12-02 (run from the repository root with carry.tar.xz:
# gpu_bundle/ of PVQ2 = the producer warpgroup and the pipelined paired steps
# with each deferred P V in a wgmma group of its own, its stages released as
# soon as it completes; gpu_bundle_WG/ = the producer warpgroup alone;
# ab/bench_S = a7be378, ab/bench_WG, ab/bench_PVQ2). The A/B of the three on
# the paired kernels' shapes; then the build with the lower geometric mean
# over the compute-bound rows (q64 verify, tree q64, prefill), if that is
# below S's, gets every GPU test, the peer run and the sanitizer / dump
# checks. Packed after each step.
set -o pipefail
tar -xJf carry.tar.xz || exit 1
pack() { tar -cJf $OUT/call3.tar.xz -C $OUT r; }
F='^BM_PagedAttention(Verify|TreeVerify|Prefill)/'
bash tools/gpu_session.sh $OUT/r ab 3 "$F" S WG PVQ2; pack
winner=$(python3 - "$OUT/r/ab_table.txt" <<'PY'
import math, sys
rows = [l.split() for l in open(sys.argv[1]) if l.startswith(('Verify', 'TreeVerify', 'Prefill'))]
bound = [r for r in rows if 'q:64/' in r[0] or r[0].startswith('Prefill')]
geo = {name: math.exp(sum(math.log(float(r[i])) for r in bound) / len(bound))
       for i, name in ((2, 'WG'), (3, 'PVQ2'))}
best = min(geo, key=geo.get)
print(best if geo[best] < 0.995 else 'none', file=sys.stdout)
print('compute-bound geomean vs S:', {k: round(v, 4) for k, v in geo.items()}, file=sys.stderr)
PY
)
echo "winner: $winner"
[[ $winner == none ]] && exit 0
# gpu_bundle_WG/ carries only WG's kernel-linked test and tool binaries (the
# carry's size limit); the rest of the bundle is the same for both builds.
if [[ $winner == WG ]]; then cp -r gpu_bundle_WG/bin/. gpu_bundle/bin/; fi
echo "4a21c78+$winner-uncommitted" > gpu_bundle/REVISION  # the peer JSON's git_revision
echo "$winner" > $OUT/r/winner.txt
bash tools/gpu_session.sh $OUT/r tests; pack
bash tools/gpu_session.sh $OUT/r peers; pack
bash tools/gpu_session.sh $OUT/r checks; pack
