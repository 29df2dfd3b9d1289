# Call 2 (carry.tar.xz as call 1): Nsight Compute sections (speed of light,
# warp states, memory workload) of our prefill b4 q512 4k and verify b16 q64
# 8k, and of flex's Triton kernel on the same prefill (flex_prefill_probe.py):
# where the compute-bound path loses to flex (call 1: prefill 0.95-0.96 of
# flex).
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
d=tools/benchmarks/h200_2026-12-04_flex_all_cases
mkdir -p $OUT/c2
sections="--section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section Occupancy"
for f in 'Prefill/heads:32_8/hd:128/batch:4/q:512/kv:4096/page:16/iter' \
         'Verify/heads:32_8/hd:128/batch:16/q:64/kv:8192/page:16/iter'; do
  echo "== ours $f"
  timeout 150 ncu --clock-control none --cache-control all -k regex:'PagedAttentionKernel' \
    --launch-skip 6 --launch-count 1 $sections \
    gpu_bundle/bin/attention_kernel_paged_attention_benchmark --benchmark_filter="$f" 2>&1 |
    grep -vE '^\s*$|^-|L[123] |^\[|^BM_|^Run|^\*\*\*|^CPU|^Load' | cut -c1-160
done > $OUT/c2/ncu_ours.txt
cat $OUT/c2/ncu_ours.txt | grep -E '^==|Duration|Throughput|Busy|Issue|Warp Cycles|Stall|Achieved|Theoretical|Executed Ipc|Pipe' | head -80
echo "== flex prefill"
timeout 200 ncu --clock-control none --cache-control all -k regex:'flex' \
  --launch-skip 5 --launch-count 1 $sections python3 $d/flex_prefill_probe.py 2>&1 |
  grep -vE '^\s*$|^-' | cut -c1-160 > $OUT/c2/ncu_flex.txt
grep -E '^  [a-z_]|Duration|Throughput|Busy|Issue|Warp Cycles|Stall|Achieved|Theoretical|Executed Ipc|Pipe|==ERR|done' $OUT/c2/ncu_flex.txt | head -60
