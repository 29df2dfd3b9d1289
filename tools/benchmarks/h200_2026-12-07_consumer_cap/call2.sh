# Call 2 (carry_call1.tar.xz, on call 1's machine): a full Nsight Compute
# profile (every section, SASS-level stall samples) of L3's and main's
# attention kernel on head_dim 64 verify b16 q8 8k, one launch each, L2
# flushed, free clocks: whether L3 moved the producer's wait off the page
# ids (../h200_2026-12-07_hd64_verify/call5.sh profiled main's first).
[[ -d gpu_bundle ]] || tar -xJf carry_call1.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/r
for v in L3 base; do
  b=ab/bench_$v; [[ $v == base ]] && b=gpu_bundle/bin/attention_kernel_paged_attention_benchmark
  timeout 150 ncu --set full --import-source no --clock-control none --cache-control all \
    -k regex:PagedAttentionKernel --launch-skip 6 --launch-count 1 -f -o $OUT/r/ncu_full_${v}_hd64 \
    $b --benchmark_filter="Verify/heads:32_8/hd:64/batch:16/q:8/kv:8192/page:16/iter" > /dev/null 2>&1
  echo "ncu $v rc=$?"
  ncu --import $OUT/r/ncu_full_${v}_hd64.ncu-rep --page details > $OUT/r/ncu_full_${v}_hd64_details.txt 2>&1
  ncu --import $OUT/r/ncu_full_${v}_hd64.ncu-rep --page source --csv --print-source sass \
    > $OUT/r/ncu_full_${v}_hd64_sass.csv 2>&1
  ncu --import $OUT/r/ncu_full_${v}_hd64.ncu-rep --page raw --csv > $OUT/r/ncu_full_${v}_hd64_raw.csv 2>&1
  grep -E 'Duration|DRAM Throughput|SM Active Cycles|Elapsed Cycles' $OUT/r/ncu_full_${v}_hd64_details.txt
done
rm -f $OUT/r/*.ncu-rep
cd $OUT/r && tar -cJf $OUT/call2.tar.xz . && rm -f *
