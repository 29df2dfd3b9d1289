#!/usr/bin/env bash
# Run from the repository root with carry.tar.xz (gpu_bundle/ and ab/bench_*).
# Paired tiles (PAIR, kernel) and co-read groups (COREAD, planner): GPU tests of
# the bundle (both), A/B of base / PAIR / COREAD / BOTH on every verify and
# prefill case plus controls, and DRAM bytes of q64 verify under ncu.
set -o pipefail
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
cp gpu_bundle/bin/attention_kernel_paged_attention_benchmark ab/bench_BOTH
R=$OUT/r; mkdir -p $R
cat gpu_bundle/REVISION
S=$SECONDS
timeout 200 bash gpu_bundle/run_tests.sh > $R/gpu_tests.log 2>&1; echo "tests rc=$? $((SECONDS - S)) s"
grep -hE "^\[  (PASSED|FAILED) |replays matched|Failure|SEED|passed, " $R/gpu_tests.log | sort | uniq -c | head -20
grep -hE "ERRSTAT" $R/gpu_tests.log | awk '{print $NF}' | sort -n | tail -1 | sed 's/^/worst error ratio /'
S=$SECONDS
F='^BM_PagedAttention(Verify|TreeVerify|Prefill|Decode/heads:32_8/hd:128/batch:32/q:1/kv:16384|DraftExtend/heads:64_8/hd:128/batch:16/q:4)/'
timeout 330 bash ab/run_ab.sh $R "$F" 2 base PAIR COREAD BOTH; echo "ab $((SECONDS - S)) s"
python3 ab/ab_table.py $R base PAIR COREAD BOTH > $R/ab_table.txt; cut -c1-130 $R/ab_table.txt
tar -cJf $OUT/call1.tar.xz -C $OUT r
for c in 'Verify/heads:32_8/hd:128/batch:64/q:64/kv:4096/page:16/' 'Verify/heads:32_8/hd:128/batch:1/q:64/kv:32768/page:16/'; do
  for v in base COREAD; do
    [ $SECONDS -gt 500 ] && break
    echo "== ncu $v $c"
    timeout 40 ncu --kernel-name regex:PagedAttentionKernel --launch-skip 3 --launch-count 1 \
      --metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum \
      ab/bench_$v --benchmark_filter="^BM_PagedAttention$c" --benchmark_repetitions=1 2>&1 | grep -E "dram__bytes_read.sum|lts__t_sector_hit_rate|gpu__time_duration" | head -4
  done
done 2>&1 | tee $R/ncu.txt
tar -cJf $OUT/call1.tar.xz -C $OUT r
