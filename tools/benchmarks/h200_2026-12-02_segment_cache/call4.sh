#!/usr/bin/env bash
# This session's fourth call. carry4.tar.xz: gpu_bundle/ = MP (61dbd01, the
# candidate: the merge kernel in one wave, two rows per warp), ab/bench_AL2
# (4ad12b8: the merge kernel as at 603312a), ab/bench_MP (the bundle's),
# ab/bench_MC (603312a + merge_one_wave_MC.patch: the one-wave grid alone,
# one row per warp in turn). An A/B of AL2, MP and MC over every case, three
# rounds; every GPU test of the bundle; then, only if MP took head_dim 64
# verify b16 q8 8k below 0.995 of AL2, the checks (memcheck, racecheck in
# four parts, graph-replay memcheck, dumps).
set -o pipefail
tar -xJf carry4.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call4.tar.xz
bash tools/gpu_session.sh $OUT/r ab 3 '.' AL2 MP MC tests
ratio=$(grep 'Verify/heads:32_8/hd:64/batch:16/q:8' $OUT/r/ab_table.txt | awk '{print $3}')
echo "MP on head_dim 64 verify b16 q8 8k: $ratio"
if awk -v r="$ratio" 'BEGIN {exit !(r != "" && r < 0.995)}'; then
  bash tools/gpu_session.sh $OUT/r checks
else
  echo "checks skipped"
fi
