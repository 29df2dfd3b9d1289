# Call 1 (2026-12-06, the forty-ninth session): probe RP (predictions.txt).
# Carry: carry.tar.xz from `bash tools/ab_carry.sh MAIN=16e8068 RP=bundle`
# on branch row-prefetch (5226bf0), ab/bench_RP renamed ab/bench_OFF, and
# wrappers ab/bench_RP{2,4,8} (export PA_ATTENTION_ROW_PREFETCH=D, then the
# bundle's benchmark).
#   1. the reader probe: per-head orders with and without whole-row L2
#      prefetch, beside all_heads and the copy rate;
#   2. A/B over 12 decode cases, 2 rounds: the probe off, D = 2, 4, 8 (main
#      itself left for a later call: after four failed starts the budget had
#      room for one call of ~5 min);
# (Correctness with the prefetch on: call2.sh, on the same machine.)
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c1_gpu.txt
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
B=gpu_bundle/bin
timeout 100 $B/attention_kernel_kv_read_pattern_benchmark \
  --benchmark_filter='DeviceCopy|order:(head_major|head_interleaved|all_heads)/copy:loads/batch:(32|1)/kv:(16384|131072)/page:16/(l2_rows|iter)|order:(head_major|head_pairs|all_heads)/copy:loads/batch:32/kv:16384/page:16/hd:64' \
  --benchmark_out=$OUT/c1_reader.json --benchmark_out_format=json 2>&1 |
  grep -E '_median|DeviceCopy.*median' | awk '{print $1, $(NF-1), $NF}' | sed 's#/iterations:1/repeats:3/manual_time##' | tee $OUT/c1_reader.txt
echo "reader: $SECONDS s"
AB_BENCH_LIMIT_S=90 GPU_SESSION_PACK=$OUT/c1.tar.xz timeout 300 bash tools/gpu_session.sh $OUT/c1 \
  ab 2 '^BM_PagedAttentionDecode/heads:(32_8/hd:128/batch:(1/q:1/kv:(32768|131072)|32/q:1/kv:16384|128/q:1/kv:(1024|4096))|64_8/hd:128/batch:32/q:1/kv:16384|32_32/hd:128/batch:(16/q:1/kv:32768|128/q:1/kv:1024)|32_8/hd:(256|64)/batch:32/q:1/kv:16384)/page:16/iter|PageSweep/heads:32_8/hd:128/batch:32/q:1/kv:16384/page:(1|64)/' \
  OFF RP2 RP4 RP8
cp $OUT/c1/ab_table.txt $OUT/c1_ab_table.txt
echo "ab: $SECONDS s"
echo "call: $SECONDS s"
