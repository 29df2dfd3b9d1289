#!/usr/bin/env bash
# Run from the repository root with carry.tar.xz (gpu_bundle/ of 743d2cd).
# Where the paired-tiles kernel spends a 64-row unit's time: one launch of
# 32/8 b1 q64 32k verify under Nsight Compute (full set, source counters), its
# summary pages and the per-instruction SASS table as CSV.
set -o pipefail
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
BM=gpu_bundle/bin/attention_kernel_paged_attention_benchmark
R=$OUT/r; mkdir -p $R
for c in 'Verify/heads:32_8/hd:128/batch:1/q:64/kv:32768/page:16/' 'Verify/heads:64_8/hd:128/batch:1/q:8/kv:32768/page:16/'; do
  name=$(echo "$c" | tr -c 'a-z0-9\n' '_' | cut -c1-60)
  timeout 150 ncu --kernel-name regex:PagedAttentionKernel --launch-skip 3 --launch-count 1 --set full \
    --import-source no -o /tmp/prof_$name -f $BM --benchmark_filter="^BM_PagedAttention$c" --benchmark_repetitions=1 > /dev/null 2>&1
  echo "== $c rc=$?"
  ncu -i /tmp/prof_$name.ncu-rep --page details > $R/details_$name.txt 2>&1
  ncu -i /tmp/prof_$name.ncu-rep --page source --csv --print-source sass > $R/sass_$name.csv 2>&1
  grep -E "Duration|Issue Slots Busy|No Eligible|DRAM Throughput|Registers Per|Achieved Occupancy|Compute \(SM\) Throughput" $R/details_$name.txt | head -10
  wc -c $R/sass_$name.csv
done
tar -cJf $OUT/call3.tar.xz -C $OUT r
