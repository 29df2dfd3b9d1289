#!/usr/bin/env bash
# Run on 2026-12-02 (prepared the session before as the pending call; the
# reader probe was added this session). From the repository root with
# carry.tar.xz from build_variants.sh and ab/kv_read_probe (this session's
# kv_read_pattern_benchmark: the head_pairs and head_quads orders) carried:
#   1. the reader probe: does a decode CTA that owns 2 or 4 KV heads (512-byte
#      and 1 KB runs of each token row) read the pool as fast as whole rows?
#   2. the A/B of S, R5, R5WG, R5PVQ2 and PF2 on the paired kernels' shapes
#      (~25 s), then, if R5's compute-bound geometric mean is below 0.995 of
#      S, R5's GPU tests, peer run and sanitizer / dump checks (~420 s).
# Packed after each step.
set -o pipefail
tar -xJf carry.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call1.tar.xz
mkdir -p $OUT/r
LD_LIBRARY_PATH=$PWD/gpu_bundle/lib timeout 120 ab/kv_read_probe \
  --benchmark_out=$OUT/r/kv_read_pattern.json --benchmark_out_format=json 2>&1 |
  grep -E "median|DeviceCopy" | sed 's/iterations:1\/repeats:3\/manual_time_//' | cut -c1-150 |
  tee $OUT/r/kv_read_pattern_table.txt
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
