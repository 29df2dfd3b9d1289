#!/usr/bin/env bash
# Fourth call (carry.tar.xz as for call3.sh): per-kernel durations at free
# clocks under Nsight Compute for the two shapes one bar short: 32/8 b1 q64 32k
# verify (how much of 106 us the merge kernel takes) and the one-tile calls
# (the attention kernel alone against the 7.6-7.9 us event time).
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
m=gpu__time_duration.sum,dram__bytes_read.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size
for c in 'Verify/heads:32_8/hd:128/batch:1/q:64/kv:32768/page:16/' \
         'OneTile/heads:32_8/hd:128/batch:1/q:1/kv:64/' 'OneTile/heads:32_8/hd:128/batch:1/q:8/kv:64/'; do
  echo "== $c"
  timeout 120 ncu --clock-control none --metrics $m --launch-skip 20 --launch-count 6 \
    ab/bench_UqF --benchmark_filter="^BM_PagedAttention$c" --benchmark_repetitions=1 2>&1 |
    grep -E '^  [A-Za-z_:<>0-9, ]+\(|gpu__time|dram__bytes|sm__throughput|grid_size' | cut -c1-150
done 2>&1 | tee $OUT/ncu_durations.txt
