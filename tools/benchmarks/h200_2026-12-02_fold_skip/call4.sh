#!/usr/bin/env bash
# This session's fourth call: the tree paired kernels without a masked paired
# step. Pairs stop before the first pair that reaches a request's last 64
# keys (a tree request's mask words), which take the single-tile loop:
#   TB   in the tree paired kernels only (tree_pairs_stop_at_mask_words.patch):
#        their SASS shrinks from 168 / 179 KB to 131 / 142 KB (general paired:
#        114 / 126 KB). Breaks ChainTreeEqualsChainVerifyBitForBit (a chain
#        given as a tree rounds its last tiles singly, the chain in pairs), so
#        it is measured here only to test the idea.
#   TBU  the same stop in every paired kernel (tree and chain), so the chain
#        as a tree keeps the chain's bits: the candidate.
# tools/ptx_diff.py: TB changes the two tree paired kernels, TBU the four
# paired kernels; every other kernel is identical. From the repository root
# with carry4.tar.xz, built here: gpu_bundle/ = TBU's bundle, ab/bench_HEAD
# (1d8a22c's benchmark), ab/bench_TB, ab/bench_TBU.
# 1. A/B of HEAD, TB and TBU on every 32/8 and 64/8 head_dim 128 verify,
#    draft-extend, tree and prefill case (three rounds, order rotated);
# 2. TBU is kept if its tree q64 rows' geomean is below 0.98 of HEAD and no
#    other row is above 1.01 (chain q64 above 1.005); then its GPU tests,
#    peer run and checks.
set -o pipefail
tar -xJf carry4.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call4.tar.xz
bash tools/gpu_session.sh $OUT/r ab 3 \
  '^BM_PagedAttention(TreeVerify|TreeDraftDecode|Verify|DraftExtend|Prefill)/heads:(32_8|64_8)/hd:128/' \
  HEAD TB TBU
keep=$(python3 - "$OUT/r/ab_table.txt" <<'PY'
import math, sys
rows = [l.split() for l in open(sys.argv[1]) if l.startswith(('Tree', 'Verify', 'DraftExtend', 'Prefill'))]
tbu = {r[0]: float(r[3]) for r in rows}
tree_q64 = [v for k, v in tbu.items() if k.startswith('Tree') and '/q:64/' in k]
chain_q64 = [v for k, v in tbu.items() if k.startswith('Verify') and '/q:64/' in k]
rest = [v for k, v in tbu.items() if '/q:64/' not in k]
geo = math.exp(sum(map(math.log, tree_q64)) / len(tree_q64))
ok = geo < 0.98 and max(chain_q64) < 1.005 and max(rest) < 1.01
print('TBU' if ok else 'HEAD')
print('TBU/HEAD tree q64 geomean %.4f, chain q64 max %.4f, others %.4f-%.4f' %
      (geo, max(chain_q64), min(rest), max(rest)), file=sys.stderr)
PY
)
echo "kept: $keep" | tee $OUT/r/kept.txt
if [[ $keep == TBU ]]; then bash tools/gpu_session.sh $OUT/r tests peers checks; fi
