#!/usr/bin/env bash
# This session's second call: G5, the general and tree kernels at head_dim 64
# with five 16 KB stages instead of four (GeneralStages; two query tiles and
# two CTAs per SM still fit: 2 x 98 KB). The key-way parity rule needs no
# multiple of the key ways since TMA went to units of more than 32 rows (one
# key way). tools/ptx_diff.py: only the two head_dim 64 general / tree
# kernels differ. From the repository root with carry2.tar.xz, built here:
# gpu_bundle/ = G5's bundle, ab/bench_HEAD (1d8a22c's benchmark), ab/bench_G5.
# 1. A/B of HEAD and G5 on every head_dim 64 case (three rounds, order
#    rotated; the decode cases run identical PTX: controls);
# 2. G5 is kept if head_dim 64 verify is below 0.99 of HEAD and no control
#    moved beyond 1.01; then the kept build's GPU tests, peer run and checks.
set -o pipefail
tar -xJf carry2.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call2.tar.xz
bash tools/gpu_session.sh $OUT/r ab 3 '^BM_PagedAttention(Verify|Decode)/heads:32_8/hd:64/' HEAD G5
keep=$(python3 - "$OUT/r/ab_table.txt" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.startswith(('Verify', 'Decode'))]
verify = [float(r[2]) for r in rows if r[0].startswith('Verify')]
control = [float(r[2]) for r in rows if r[0].startswith('Decode')]
print('G5' if verify and max(verify) < 0.99 and max(control) < 1.01 else 'HEAD')
print('G5/HEAD verify %s, decode (controls) %s' % (verify, control), file=sys.stderr)
PY
)
echo "kept: $keep" | tee $OUT/r/kept.txt
if [[ $keep == G5 ]]; then bash tools/gpu_session.sh $OUT/r tests peers checks; fi
