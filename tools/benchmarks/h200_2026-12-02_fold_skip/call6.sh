#!/usr/bin/env bash
# This session's sixth call: why the tree paired kernel runs q64 verify
# slower than the chain's at b64 (tree / chain 1.141-1.146 in call1, bar
# 1.15; the tree's 815 us is stable across machines, the chain's 713-743 us
# is not) when TB (call4) showed that its code size explains at most b1's
# 3-4%. Nsight Compute at free clocks on 1d8a22c's benchmark, one timed
# replay each of the tree and chain kernels at b64 and b1 q64: speed of
# light, warp states, instruction and scheduler statistics, and the source
# counters' top stall sites. From the repository root with carry5.tar.xz.
set -o pipefail
tar -xJf carry5.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/r
for filter in 'TreeVerify/heads:32_8/hd:128/batch:64/q:64/kv:4096/page:16/tree:balanced' \
              'Verify/heads:32_8/hd:128/batch:64/q:64/kv:4096/' \
              'TreeVerify/heads:32_8/hd:128/batch:1/q:64/kv:32768/page:16/tree:balanced' \
              'Verify/heads:32_8/hd:128/batch:1/q:64/kv:32768/'; do
  echo "== $filter"
  timeout 120 ncu --clock-control none --cache-control none -k regex:PagedAttentionKernel \
    --launch-skip 6 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
    --section InstructionStats --section SchedulerStats --section SourceCounters \
    --section MemoryWorkloadAnalysis \
    ab/bench_HEAD --benchmark_filter="^BM_PagedAttention$filter" 2>&1 |
    grep -vE '^(BM_|Run on|CPU|  L[123]|Load|\*\*\*|==PROF==|copy_tbps|cuda_|gpu|git|20[0-9][0-9]-)' |
    grep -vE '^\s*$|^\s+-+\s+-+|Metric Name +Metric Unit'
done > $OUT/r/ncu_tree_vs_chain_q64.txt 2>&1
grep -E '^== |Duration|Executed Instructions  |No Eligible|Warp Cycles Per Issued|Stall|L2 Hit|DRAM Through' \
  $OUT/r/ncu_tree_vs_chain_q64.txt | head -80
