#!/usr/bin/env bash
# This session's second call (from the repository root, carry2.tar.xz from
# build here: gpu_bundle/ = DRWG's bundle, gpu_bundle_dr/ = DR's, and
# ab/bench_{S,DR,DRWG}):
#   DR    the deep ring: R5's five stages and one query tile only in the
#         paired kernels of compute-bound plans (max_seq_len_q x group > 64),
#         S's paired kernels (PTX identical) for the memory-bound 64-row ones
#   DRWG  DR plus the producer warpgroup with setmaxnreg 72 / 184 in the
#         deep-ring kernels only (R5WG's, without the pipelined steps)
# 1. A/B of S, DR, DRWG on the paired kernels' shapes (three rounds);
# 2. DRWG is kept if its compute-bound geomean is below 0.99 of DR's and its
#    memory-bound 64-row rows are within 1.005 of DR's; the kept build's GPU
#    tests, peer run and sanitizer / dump checks. Packed after each step.
set -o pipefail
tar -xJf carry2.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call2.tar.xz
F='^BM_PagedAttention(Verify|TreeVerify|Prefill)/'
bash tools/gpu_session.sh $OUT/r ab 3 "$F" S DR DRWG
keep=$(python3 - "$OUT/r/ab_table.txt" <<'PY'
import math, sys
rows = [l.split() for l in open(sys.argv[1]) if l.startswith(('Verify', 'TreeVerify', 'Prefill'))]
bound = [r for r in rows if 'q:64/' in r[0] or r[0].startswith('Prefill')]
streaming = [r for r in rows if 'heads:64_8/hd:128' in r[0] or 'q:16/' in r[0]]
geo = lambda rs, c: math.exp(sum(math.log(float(r[c])) for r in rs) / len(rs))
bound_ratio = geo(bound, 3) / geo(bound, 2)          # DRWG over DR
streaming_ratio = geo(streaming, 3) / geo(streaming, 2)
print('DRWG' if bound_ratio < 0.99 and streaming_ratio < 1.005 else 'DR')
print('DRWG/DR compute-bound %.4f, memory-bound 64-row %.4f; DR/S %.4f / %.4f' %
      (bound_ratio, streaming_ratio, geo(bound, 2), geo(streaming, 2)), file=sys.stderr)
PY
)
echo "kept for the rest of the call: $keep"
if [[ $keep == DR ]]; then mv gpu_bundle gpu_bundle_drwg && mv gpu_bundle_dr gpu_bundle; fi
echo "$keep" > $OUT/r/kept.txt
bash tools/gpu_session.sh $OUT/r tests peers checks
