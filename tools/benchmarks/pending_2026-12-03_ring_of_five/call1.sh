#!/usr/bin/env bash
# Prepared on 2026-12-02 for the next device session (run from the repository
# root with carry.tar.xz from build_variants.sh): the A/B of S, R5, R5WG,
# R5PVQ2 and PF2 on the paired kernels' shapes (~25 s), then R5's GPU tests, peer
# run and sanitizer / dump checks (~420 s). If R5 loses to S on the
# compute-bound rows, the rest is skipped. Packed after each step.
set -o pipefail
tar -xJf carry.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call1.tar.xz
F='^BM_PagedAttention(Verify|TreeVerify|Prefill)/'
bash tools/gpu_session.sh $OUT/r ab 3 "$F" S R5 R5WG R5PVQ2 PF2
keep=$(python3 - "$OUT/r/ab_table.txt" <<'PY'
import math, sys
rows = [l.split() for l in open(sys.argv[1]) if l.startswith(('Verify', 'TreeVerify', 'Prefill'))]
bound = [r for r in rows if 'q:64/' in r[0] or r[0].startswith('Prefill')]
geo = math.exp(sum(math.log(float(r[2])) for r in bound) / len(bound))  # column 2: R5
print('yes' if geo < 0.995 else 'no')
print('R5 compute-bound geomean vs S: %.4f' % geo, file=sys.stderr)
PY
)
echo "R5 kept for the rest of the call: $keep"
[[ $keep == yes ]] || exit 0
bash tools/gpu_session.sh $OUT/r tests peers checks
