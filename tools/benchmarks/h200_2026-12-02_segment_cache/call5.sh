#!/usr/bin/env bash
# This session's fifth call. carry5.tar.xz: gpu_bundle/ = MP2 (c2fbb75: MP
# with the two-row loop apart from the one-row loop), ab/bench_AL2 (4ad12b8),
# ab/bench_MP (call 4's), ab/bench_MP2 (the bundle's). An A/B of AL2, MP and
# MP2 over every case, three rounds; every GPU test of the bundle; then the
# checks only if MP2 keeps MP's gain on head_dim 64 verify b16 q8 8k (below
# 0.995 of AL2) without its one-request loss (b1 verify q8 32k and tree
# verify b1 q8 at most 1.005).
set -o pipefail
tar -xJf carry5.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call5.tar.xz
bash tools/gpu_session.sh $OUT/r ab 3 '.' AL2 MP MP2 tests
col() { grep "$1" $OUT/r/ab_table.txt | head -1 | awk '{print $4}'; }
hd64=$(col 'Verify/heads:32_8/hd:64/batch:16/q:8')
b1=$(col 'Verify/heads:32_8/hd:128/batch:1/q:8/kv:32768')
tree=$(col 'TreeVerify/heads:32_8/hd:128/batch:1/q:8/kv:32768/page:16/tree:balanced')
echo "MP2: head_dim 64 verify b16 $hd64, b1 verify q8 32k $b1, tree verify b1 q8 $tree"
if awk -v a="$hd64" -v b="$b1" -v c="$tree" 'BEGIN {exit !(a < 0.995 && b <= 1.005 && c <= 1.005)}'; then
  bash tools/gpu_session.sh $OUT/r checks
else
  echo "checks skipped"
fi
