#!/usr/bin/env bash
# This session's first call: the checks FS (962b69a, the decode kernel's skip
# of empty key ways' fold round) did not get last session, on the bundle of
# 1d8a22c (the committed tree; 1d8a22c changed only NOTES): every GPU test,
# the peer run, the sanitizers and dump checks. Before them, Nsight Compute at
# free clocks (cheap: durations only) of the attention and merge kernels of
# the shapes whose misses are closest to their bars: head_dim 64 verify q8
# b16 8k (E 0.84, bar 0.85) beside the same shape at head_dim 128 (E 0.95),
# and the one-tile calls (7.9 / 8.3 us, bar 6). From the repository root with
# carry1.tar.xz (the bundle).
set -o pipefail
tar -xJf carry1.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
bench=gpu_bundle/bin/attention_kernel_paged_attention_benchmark
mkdir -p $OUT/r
for filter in 'Verify/heads:32_8/hd:64/batch:16/q:8/kv:8192/' 'Verify/heads:32_8/hd:128/batch:16/q:8/kv:8192/' \
              'OneTile/.*q:1/' 'OneTile/.*q:8/'; do
  echo "== $filter"
  timeout 100 ncu --clock-control none --cache-control none -k regex:'PagedAttentionKernel|MergeKernel' \
    --launch-skip 6 --launch-count 4 \
    --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,launch__grid_size,smsp__inst_executed.sum \
    $bench --benchmark_filter="$filter" 2>&1 | grep -E '^  [a-zA-Z_]|gpu__|sm__|launch__|smsp__' | cut -c1-150
done > $OUT/r/ncu_durations.txt
export GPU_SESSION_PACK=$OUT/call1.tar.xz
bash tools/gpu_session.sh $OUT/r tests peers checks
