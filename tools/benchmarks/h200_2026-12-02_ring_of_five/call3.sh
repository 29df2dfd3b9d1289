#!/usr/bin/env bash
# This session's third call: where a one-tile call's time goes (bar: <= 6 us;
# DRWG's peer run 7.9 us for q=1, 8.3 us for q=8, against 3.3 us for an empty
# kernel's graph replay back to back, launch_floor.txt of
# h200_2026-12-01_merge_kernel/). Nsight Compute at free clocks, caches left
# as the benchmark leaves them (the one-tile cases run with L2 warm): the
# attention kernel's own duration and its warp states, for the one-tile cases
# and, for scale, one-request decode and verify at 32k (L2 flushed by the
# benchmark between replays). From the repository root with carry3.tar.xz
# (DRWG's benchmark and libraries).
set -o pipefail
tar -xJf carry3.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
bench=gpu_bundle/bin/attention_kernel_paged_attention_benchmark
mkdir -p $OUT/r
for filter in 'OneTile/.*q:1/' 'OneTile/.*q:8/' 'Decode/heads:32_8/hd:128/batch:1/q:1/kv:32768/' \
              'Verify/heads:32_8/hd:128/batch:1/q:8/kv:32768/'; do
  echo "== $filter"
  timeout 120 ncu --clock-control none --cache-control none -k regex:'PagedAttentionKernel|MergeKernel' \
    --launch-skip 6 --launch-count 4 \
    --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,launch__grid_size,launch__block_size,smsp__inst_executed.sum \
    $bench --benchmark_filter="$filter" 2>&1 | grep -E '^  [a-zA-Z_]|Kernel|gpu__|sm__|launch__|smsp__' | cut -c1-150
done | tee $OUT/r/ncu_durations.txt
echo "== warp states of the one-tile q=1 attention kernel" | tee $OUT/r/ncu_onetile_details.txt
timeout 180 ncu --clock-control none --cache-control none -k regex:PagedAttentionKernel \
  --launch-skip 6 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
  --section LaunchStats --section SchedulerStats --section InstructionStats \
  $bench --benchmark_filter='OneTile/.*q:1/' 2>&1 | grep -vE '^(BM_|Run on|CPU|  L[123]|Load|---|\*\*\*)' |
  tee -a $OUT/r/ncu_onetile_details.txt | tail -60
