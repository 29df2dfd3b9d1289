#!/usr/bin/env bash
# This session's third call, on the machine call 2 left warm: call 2's
# merge-kernel ncu again (carry2.tar.xz), with the bundle's libraries on
# the path this time (without them the benchmark exited 127).
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
tar -xJf carry2.tar.xz || exit 1
for name in AL2 MW2; do
  for filter in 'Verify/heads:32_8/hd:64/batch:16/q:8/kv:8192/' 'Verify/heads:32_8/hd:128/batch:1/q:8/kv:32768/page:16/'; do
    echo "== $name $filter"
    timeout 60 ncu --clock-control none --cache-control all -k regex:MergeKernel --launch-skip 2 --launch-count 3 \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,dram__bytes_read.sum,lts__t_sector_hit_rate.pct \
      ab/bench_$name --benchmark_filter="$filter" 2>&1 | grep -E 'MergeKernel|gpu__time|smsp__inst|warps_active|grid_size|registers|dram__|lts__|ERR' | cut -c1-120
  done
done
