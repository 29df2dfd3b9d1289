#!/usr/bin/env bash
# This session's eighth call: UQT, the query tile's address through a shuffle
# from lane 0 in the deep-ring tree kernel too (`Uq`, e7c0337, had left it out
# of the tree kernels because the shallow-ring one spilled; the deep ring's
# 184 consumer registers take it without a spill). call7 found the tree
# kernels running 4.2% more instructions than the chain's at every q64 size;
# `Uq` had removed the wgmma descriptor moves (R2UR) this saves from the
# chain. tools/ptx_diff.py: only the deep-ring tree kernel differs; the bits
# cannot change (the same address). From the repository root with
# carry8.tar.xz: gpu_bundle/ = UQT's bundle, ab/bench_HEAD (1d8a22c),
# ab/bench_UQT.
# 1. A/B of HEAD and UQT on tree and chain q64 at b1, b16, b64 (three rounds;
#    the chains run identical PTX: controls);
# 2. UQT is kept if its tree rows' geomean is below 0.985 of HEAD and no
#    tree row is above 1.01; then its GPU tests and peer run (the sanitizer
#    checks did not fit the device time left).
set -o pipefail
tar -xJf carry8.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call8.tar.xz
bash tools/gpu_session.sh $OUT/r ab 3 \
  '^BM_PagedAttention(TreeVerify|Verify)/heads:32_8/hd:128/batch:(1|16|64)/q:64/' HEAD UQT
keep=$(python3 - "$OUT/r/ab_table.txt" <<'PY'
import math, sys
rows = [l.split() for l in open(sys.argv[1]) if l.startswith(('Tree', 'Verify'))]
tree = [float(r[2]) for r in rows if r[0].startswith('Tree')]
chain = [float(r[2]) for r in rows if r[0].startswith('Verify')]
geo = math.exp(sum(map(math.log, tree)) / len(tree))
print('UQT' if geo < 0.985 and max(tree) < 1.01 else 'HEAD')
print('UQT/HEAD tree geomean %.4f (max %.4f), chains (controls) %.4f-%.4f' %
      (geo, max(tree), min(chain), max(chain)), file=sys.stderr)
PY
)
echo "kept: $keep" | tee $OUT/r/kept.txt
if [[ $keep == UQT ]]; then bash tools/gpu_session.sh $OUT/r tests peers; fi
