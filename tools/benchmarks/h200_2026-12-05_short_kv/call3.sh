# Call 3 (2026-12-05, the forty-eighth session): `SKV3` (eight warps copy K/V,
# units of up to 8 rows fold from slots), after calls 1-2 found `SKV1` and
# `SKV2` 11-17% slower than the persistent kernel on the OneTile cases.
# Carry: carry.tar.xz = gpu_bundle/ of the commit under test, ab/bench_SHORT
# and ab/bench_MAIN (PA_ATTENTION_NO_SHORT_KV=1) wrappers of its benchmark,
# ab/bench_SKVT (branch short-kv-timeline: the same kernel printing the
# clock64 cycles of its steps, thread 0 of CTA 0, once per launch).
# Prediction: predictions.txt ("Added before call 3").
#   1. A/B of the OneTile cases (5 rounds, order rotated);
#   2. the timeline of OneTile q1 and q8 (medians over the launches);
#   3. the short-KV test, the graph replay stress test, memcheck and
#      racecheck of the short-KV test.
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c3_gpu.txt
GPU_SESSION_PACK=$OUT/c3_pack.tar.xz AB_BENCH_LIMIT_S=90 timeout 200 bash tools/gpu_session.sh $OUT/c3 ab 5 'OneTile' SHORT MAIN
cp $OUT/c3/ab_table.txt $OUT/c3_ab_table.txt
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
B=gpu_bundle/bin
for q in 1 8; do
  timeout 60 ab/bench_SKVT --benchmark_filter="^BM_PagedAttentionOneTile/.*/q:$q/" 2>&1 |
    grep '^SKVT' > $OUT/c3_timeline_q$q.txt
  echo "timeline q$q ($(wc -l < $OUT/c3_timeline_q$q.txt) launches), median cycles since entry:"
  python3 -c "
import statistics, sys
rows = [l.split() for l in open('$OUT/c3_timeline_q$q.txt')]
names = rows[0][1::2]
print('  ' + '  '.join('%s %d' % (n, statistics.median(int(r[2 + 2 * i]) for r in rows)) for i, n in enumerate(names)))
"
done
timeout 100 $B/attention_kernel_paged_attention_test --gtest_filter='*ShortKv*' --gtest_brief=1 \
  > $OUT/c3_short_test.txt 2>&1; echo "short-KV test rc=$?"; tail -2 $OUT/c3_short_test.txt
timeout 100 $B/attention_kernel_graph_replay_stress_test --gtest_brief=1 > $OUT/c3_stress.txt 2>&1
echo "stress rc=$?"; grep -E "replays matched|PASSED|FAILED" $OUT/c3_stress.txt
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 $B/attention_kernel_paged_attention_test \
  --gtest_filter='*ShortKv*' --gtest_brief=1 > $OUT/c3_short_memcheck.txt 2>&1
echo "short-KV memcheck rc=$?"; tail -2 $OUT/c3_short_memcheck.txt
timeout 150 compute-sanitizer --tool racecheck --print-limit 100 $B/attention_kernel_paged_attention_test \
  --gtest_filter='*ShortKv*' --gtest_brief=1 > $OUT/c3_short_racecheck.txt 2>&1
echo "short-KV racecheck rc=$?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $OUT/c3_short_racecheck.txt
echo "call: $SECONDS s"
