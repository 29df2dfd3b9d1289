#!/usr/bin/env bash
# This session's first call. carry1.tar.xz: gpu_bundle/ = SC (ef14085, the
# candidate), ab/bench_AL2 (4ad12b8, the last session's kernel), ab/bench_SC
# (the bundle's), ab/bench_SCG (SC's cache in every kernel: a probe),
# ab/bench_MW2 (4ad12b8 + merge_warps_per_row_MW2.patch of
# h200_2026-12-02_all_lanes). An A/B of AL2, SC and SCG over every case, five
# rounds; every GPU test of the bundle; then the merge-kernel probe: Nsight
# Compute of the merge kernel alone (duration, instructions, occupancy) at
# AL2 and MW2 on the two plans MW moved in opposite directions, and the
# merge kernels' SASS of both builds if the machine has cuobjdump.
set -o pipefail
tar -xJf carry1.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call1.tar.xz
bash tools/gpu_session.sh $OUT/r ab 5 '.' AL2 SC SCG tests
start=$SECONDS
{
  for name in AL2 MW2; do
    for filter in 'Verify/heads:32_8/hd:64/batch:16/q:8/kv:8192/' \
                  'Verify/heads:32_8/hd:128/batch:1/q:8/kv:32768/page:16/'; do
      echo "== $name $filter"
      timeout 100 ncu --clock-control none --cache-control all -k regex:MergeKernel \
        --launch-skip 2 --launch-count 3 \
        --metrics gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__shared_mem_per_block_static,launch__grid_size,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,smsp__cycles_active.avg \
        ab/bench_$name --benchmark_filter="$filter" 2>&1 |
        grep -E '^  [a-zA-Z_].*\(|gpu__|smsp__|sm__|launch__|dram__|lts__' | cut -c1-150
    done
  done
} > $OUT/r/ncu_merge.txt 2>&1
cat $OUT/r/ncu_merge.txt
if command -v cuobjdump > /dev/null; then
  for name in AL2 MW2; do
    cuobjdump -sass ab/bench_$name 2> /dev/null |
      awk '/Function : / {keep = ($0 ~ /MergeKernel/)} keep' > $OUT/r/sass_merge_$name.txt
    echo "sass $name: $(grep -c 'Function :' $OUT/r/sass_merge_$name.txt) merge kernels," \
      "$(wc -l < $OUT/r/sass_merge_$name.txt) lines"
  done
else
  echo "no cuobjdump on this machine"; ls /usr/local/cuda/bin | tr '\n' ' '
fi
echo "=== merge probe: $((SECONDS - start)) s"
tar -cJf $OUT/call1.tar.xz -C $OUT r
