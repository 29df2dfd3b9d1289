# Call 5 (carry2.tar.xz as calls 2 and 4), the sixty-third session. On an
# H200: call 4's A/B of base, S5 and S6 (five rounds). On any card: a full
# Nsight Compute profile (every section, SASS-level stall samples) of main's
# attention kernel on head_dim 64 verify b16 q8 8k and on its head_dim 128
# twin, one launch each, L2 flushed, free clocks, to see where the head_dim 64
# kernel spends the ~7.5 us (H200) / 3.7 us (H100) it runs over the copy time
# that the twin does not (1.9-2.7 us); then racecheck parts 6-7 of main's
# bundle (GQA ratios, member pairs), which call 4 did not reach.
tar -xJf carry2.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
export GPU_SESSION_PACK=$OUT/call5.tar.xz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$gpu"
mkdir -p $OUT/r
if [[ $gpu == *H200* ]]; then
  AB_BENCH_LIMIT_S=60 bash tools/gpu_session.sh $OUT/r ab 5 \
    'Verify/heads:32_8/hd:(64|128)/batch:16/q:8/kv:8192/page:16/|hd:64/batch:(1|32)/q:1/' base S5 S6
fi
bench=gpu_bundle/bin/attention_kernel_paged_attention_benchmark
for hd in 64 128; do
  timeout 150 ncu --set full --import-source no --clock-control none --cache-control all \
    -k regex:PagedAttentionKernel --launch-skip 6 --launch-count 1 -f -o $OUT/r/ncu_full_hd$hd \
    $bench --benchmark_filter="Verify/heads:32_8/hd:$hd/batch:16/q:8/kv:8192/page:16/iter" \
    > $OUT/r/ncu_full_hd${hd}_run.log 2>&1
  echo "ncu hd$hd rc=$?"
  ncu --import $OUT/r/ncu_full_hd$hd.ncu-rep --page details > $OUT/r/ncu_full_hd${hd}_details.txt 2>&1
  ncu --import $OUT/r/ncu_full_hd$hd.ncu-rep --page source --csv --print-source sass \
    > $OUT/r/ncu_full_hd${hd}_sass.csv 2>&1
  xz -f $OUT/r/ncu_full_hd${hd}_sass.csv
  grep -E 'Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Block Size|Grid Size|Waves Per SM|Issue Slots Busy|No Eligible' \
    $OUT/r/ncu_full_hd${hd}_details.txt | head -20
done
(cd $OUT/r && tar -cJf $OUT/call5.tar.xz .)
RACECHECK_PARTS="6 7" bash tools/gpu_session.sh $OUT/r racecheck
