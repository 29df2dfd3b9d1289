# Call 6 (carry.tar.xz: the bundle of 8ae62fd, kernels as fd3e3f2): Nsight
# Compute of capped verify q64 and prefill and of their uncapped twins, with
# the pipe metrics this ncu knows (queried first, so a missing name cannot
# fail the call).
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/c6
ncu --query-metrics --chip gh100 > $OUT/c6/metrics.txt 2>&1
bases=$(awk '{print $1}' $OUT/c6/metrics.txt | grep -xE 'sm__inst_executed_pipe_xu|sm__pipe_fma_cycles_active|sm__pipe_alu_cycles_active|smsp__issue_active|sm__pipe_tensor_op_gmma_cycles_active|sm__pipe_tensor_op_hmma_cycles_active|sm__inst_executed_pipe_fma' | tr '\n' ' ')
echo "metrics: $bases"
m=gpu__time_duration.sum
for b in $bases; do m+=",$b.avg.pct_of_peak_sustained_active"; done
for f in 'Softcap/.*/q:64/' 'Verify/heads:32_8/hd:128/batch:16/q:64/kv:8192/page:16/iter' \
         'Softcap/.*/q:512/' 'Prefill/heads:32_8/hd:128/batch:4/q:512/kv:4096/page:16/iter'; do
  echo "== $f"
  timeout 100 ncu --clock-control none --cache-control all -k regex:'PagedAttentionKernel' \
    --launch-skip 6 --launch-count 2 --metrics "$m" \
    gpu_bundle/bin/attention_kernel_paged_attention_benchmark --benchmark_filter="$f" 2>&1 |
    grep -E '^  [a-zA-Z_].*\(|gpu__|sm__|smsp__|==ERROR|==WARNING' | cut -c1-150
done | tee $OUT/c6/ncu_pipes.txt
