#!/usr/bin/env bash
# Why b64 q64 random-tree verify costs 10-17% more than the chain (balanced: 3%): repetitions, then
# one launch each under Nsight Compute (duration, DRAM bytes, L2 hit rate).
set -o pipefail
tar -xJf gpu_bundle.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
BM=gpu_bundle/bin/attention_kernel_paged_attention_benchmark
F='^BM_PagedAttention(Verify|TreeVerify)/heads:32_8/hd:128/batch:(64|16)/q:64/'
timeout 100 $BM --benchmark_filter="$F" --benchmark_repetitions=7 --benchmark_report_aggregates_only=true \
  --benchmark_out=$OUT/tree_reps.json --benchmark_out_format=json 2>/dev/null | grep -E "median|cv" | sed 's/   */ /g' | cut -c1-150
for c in 'Verify/heads:32_8/hd:128/batch:64/q:64/kv:4096/page:16/' 'TreeVerify/.*batch:64/q:64.*balanced' 'TreeVerify/.*batch:64/q:64.*random'; do
  echo "== ncu $c"
  timeout 80 ncu --kernel-name regex:PagedAttentionKernel --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum \
    $BM --benchmark_filter="^BM_PagedAttention$c" --benchmark_repetitions=1 2>&1 | grep -E "dram__bytes_read.sum|lts__t_sector_hit_rate|gpu__time_duration|Duration|DRAM Throughput|L2 Hit Rate|Memory Throughput" | head -8
done
