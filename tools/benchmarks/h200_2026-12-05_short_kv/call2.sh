# Call 2 (2026-12-05, the forty-eighth session): `SKV2` (page ids once per
# page through shared memory, shift-and-mask page arithmetic), after call 1
# found `SKV1` 13-17% slower than the persistent kernel on the OneTile cases.
# Carry: carry.tar.xz = gpu_bundle/ of the commit under test, ab/bench_SHORT
# and ab/bench_MAIN (PA_ATTENTION_NO_SHORT_KV=1) wrappers of its benchmark.
#   1. A/B of the OneTile cases (5 rounds, order rotated);
#   2. ncu of both kernels on OneTile q1 / q8, L2 warm: duration and
#      instructions executed;
#   3. the short-KV test, the graph replay stress test, memcheck and
#      racecheck of the short-KV test.
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c2_gpu.txt
AB_BENCH_LIMIT_S=90 timeout 200 bash tools/gpu_session.sh $OUT/c2 ab 5 'OneTile' SHORT MAIN
cp $OUT/c2/ab_table.txt $OUT/c2_ab_table.txt
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
B=gpu_bundle/bin
for v in SHORT MAIN; do
  for q in 1 8; do
    echo "== ncu $v q$q"
    timeout 60 ncu --clock-control none --cache-control none \
      -k regex:'ShortKvKernel|PagedAttentionKernel' --launch-skip 6 --launch-count 3 \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum,sm__cycles_active.max \
      ab/bench_$v --benchmark_filter="^BM_PagedAttentionOneTile/.*/q:$q/" 2>&1 |
      grep -E 'gpu__|smsp__|sm__' | cut -c1-120
  done
done > $OUT/c2_ncu.txt 2>&1
cat $OUT/c2_ncu.txt
timeout 100 $B/attention_kernel_paged_attention_test --gtest_filter='*ShortKv*' --gtest_brief=1 \
  > $OUT/c2_short_test.txt 2>&1; echo "short-KV test rc=$?"; tail -2 $OUT/c2_short_test.txt
timeout 100 $B/attention_kernel_graph_replay_stress_test --gtest_brief=1 > $OUT/c2_stress.txt 2>&1
echo "stress rc=$?"; grep -E "replays matched|PASSED|FAILED" $OUT/c2_stress.txt
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 $B/attention_kernel_paged_attention_test \
  --gtest_filter='*ShortKv*' --gtest_brief=1 > $OUT/c2_short_memcheck.txt 2>&1
echo "short-KV memcheck rc=$?"; tail -2 $OUT/c2_short_memcheck.txt
timeout 150 compute-sanitizer --tool racecheck --print-limit 100 $B/attention_kernel_paged_attention_test \
  --gtest_filter='*ShortKv*' --gtest_brief=1 > $OUT/c2_short_racecheck.txt 2>&1
echo "short-KV racecheck rc=$?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $OUT/c2_short_racecheck.txt
echo "call: $SECONDS s"
