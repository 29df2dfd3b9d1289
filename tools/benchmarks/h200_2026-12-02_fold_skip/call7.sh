#!/usr/bin/env bash
# This session's seventh call: call6's DRAM bytes came from a multi-pass ncu
# run without cache control (a later pass may see an earlier pass's L2). Here
# one pass of four metrics, L2 flushed by ncu before each launch, three
# launches each, at free clocks: DRAM bytes read, L2 hit rate, instructions
# and duration of the tree and chain kernels at b64, b16 and b1 q64. From the
# repository root with carry5.tar.xz (1d8a22c's benchmark).
set -o pipefail
tar -xJf carry5.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/r
for filter in 'TreeVerify/heads:32_8/hd:128/batch:64/q:64/kv:4096/page:16/tree:balanced' \
              'TreeVerify/heads:32_8/hd:128/batch:64/q:64/kv:4096/page:16/tree:random' \
              'Verify/heads:32_8/hd:128/batch:64/q:64/kv:4096/' \
              'TreeVerify/heads:32_8/hd:128/batch:16/q:64/kv:8192/page:16/tree:random' \
              'Verify/heads:32_8/hd:128/batch:16/q:64/kv:8192/' \
              'TreeVerify/heads:32_8/hd:128/batch:1/q:64/kv:32768/page:16/tree:balanced' \
              'Verify/heads:32_8/hd:128/batch:1/q:64/kv:32768/'; do
  echo "== $filter"
  timeout 100 ncu --clock-control none --cache-control all -k regex:PagedAttentionKernel \
    --launch-skip 6 --launch-count 3 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum \
    ab/bench_HEAD --benchmark_filter="^BM_PagedAttention$filter" 2>&1 |
    grep -E 'gpu__|dram__|lts__|smsp__'
done | tee $OUT/r/ncu_tree_vs_chain_dram.txt
