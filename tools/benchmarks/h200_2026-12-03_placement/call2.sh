# Call 2 (carry2.tar.xz): is the benchmark's spread of co-read plans the
# GPU's clocks? nvidia-smi samples clocks, power and temperatures every 50 ms
# while four processes run verify q64 b64 4k, tree q64 b16 balanced and decode
# b32 16k (control) at eight placements: in order (SHIFT), reversed (SHIFTR),
# in order with the host idle 2 ms after each replay (SHIFTGAP), in order again.
# Each case stamps its begin and end (wall clock) on stderr. Then ab/bench_CLK
# (the working tree's benchmark with the sm_MHz / power_W counters) twice.
tar -xJf carry2.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
r=$OUT/r; mkdir -p $r
fields=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,temperature.memory,clocks_throttle_reasons.active
nvidia-smi --query-gpu=$fields --format=csv -lms 50 > $r/smi.csv 2>&1 &
smi=$!
filter='^BM_PagedAttention(Verify/heads:32_8/hd:128/batch:64/q:64/kv:4096/|TreeVerify/heads:32_8/hd:128/batch:16/q:64/kv:8192/page:16/tree:balanced|Decode/heads:32_8/hd:128/batch:32/q:1/kv:16384/page:16/)'
i=0
for v in SHIFT SHIFTR SHIFTGAP SHIFT; do
  i=$((i + 1))
  ab/bench_$v --benchmark_filter="$filter" --benchmark_out=$r/ab_${v}_$i.json --benchmark_out_format=json > /dev/null 2> $r/ab_${v}_$i.err
  echo "$v $i rc=$?"
done
# The working tree's benchmark (sm_MHz / power_W counters from NVML), decode
# and q64 verify without placements, twice.
for i in 5 6; do
  ab/bench_CLK --benchmark_filter="$filter" --benchmark_out=$r/ab_CLK_$i.json --benchmark_out_format=json > /dev/null 2> $r/ab_CLK_$i.err
  echo "CLK $i rc=$?"
done
kill $smi
python3 tools/ab_table.py $r SHIFT SHIFTR SHIFTGAP CLK > $r/ab_table.txt 2>&1
cut -c1-160 $r/ab_table.txt
tail -3 $r/smi.csv
tar -cJf $OUT/call2.tar.xz -C $r .
