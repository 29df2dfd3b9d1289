# Call 4 (carry.tar.xz: gpu_bundle of a537c41): Nsight Compute sections of
# the member pairs' kernel (two consumer warpgroups, one CTA per SM) against
# one group per CTA (PA_ATTENTION_NO_MEMBER_PAIRS=1) on prefill b4 q512 4k
# and verify b16 q64 8k, as NCUP measured one group (flex_all_cases call 2):
# what limits the pairs, for the next compute-bound step.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
sections="--section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section Occupancy --section SchedulerStats"
for pairs in 1 0; do
  for f in 'Prefill/heads:32_8/hd:128/batch:4/q:512/kv:4096/page:16/iter' \
           'Verify/heads:32_8/hd:128/batch:16/q:64/kv:8192/page:16/iter'; do
    echo "== pairs=$pairs $f"
    if ((pairs)); then unset PA_ATTENTION_NO_MEMBER_PAIRS; else export PA_ATTENTION_NO_MEMBER_PAIRS=1; fi
    timeout 120 ncu --clock-control none --cache-control all -k regex:'PagedAttentionKernel' \
      --launch-skip 6 --launch-count 1 $sections \
      gpu_bundle/bin/attention_kernel_paged_attention_benchmark --benchmark_filter="$f" 2>&1 |
      grep -vE '^\s*$|^-|L[123] |^\[|^BM_|^Run|^\*\*\*|^CPU|^Load' | cut -c1-160
  done
done > $OUT/c4_ncu.txt
grep -E '^==|PagedAttentionKernel|Duration|Throughput|Busy|Issue|Warp Cycles|Stall|Achieved|Theoretical|Executed Ipc|Pipe|Eligible|No Eligible|Active Warps' $OUT/c4_ncu.txt | cut -c1-120 | head -120
