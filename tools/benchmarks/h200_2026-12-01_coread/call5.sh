#!/usr/bin/env bash
# Run from the repository root with carry.tar.xz of call4 (ab/bench_{NEW,FTZ}).
# Why FTZ slows memory-bound 64-row units: one launch each of 64/8 b16 q8 8k
# verify (FTZ 1.022 in ab3) and 32/8 b1 q64 32k (FTZ 0.952) under ncu, NEW
# beside FTZ: duration, DRAM throughput, issue and warp-state statistics.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
for c in 'Verify/heads:64_8/hd:128/batch:16/q:8/kv:8192/page:16/' 'Verify/heads:32_8/hd:128/batch:1/q:64/kv:32768/page:16/'; do
  for v in NEW FTZ; do
    echo "== $v $c"
    timeout 60 ncu --kernel-name regex:PagedAttentionKernel --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
      ab/bench_$v --benchmark_filter="^BM_PagedAttention$c" --benchmark_repetitions=1 2>&1 |
      grep -E "Duration|DRAM Throughput|Issue Slots Busy|No Eligible|Eligible Warps|Warp Cycles Per Issued|Stall|L2 Hit Rate|Mem Busy" | sed 's/   */ /g' | head -16
  done
done
