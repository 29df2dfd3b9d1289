# Call 2 (carry.tar.xz: gpu_bundle of the turns commit + ab/bench_{pairs,free,one},
# wrappers of the bundle's benchmark: default, PA_ATTENTION_NO_TURNS=1,
# PA_ATTENTION_NO_MEMBER_PAIRS=1): the 3-way A/B of the compute-bound cases,
# every GPU test, then racecheck and memcheck of the member pairs' test.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
GPU_SESSION_PACK=$OUT/c2.tar.xz AB_REPLAY_GAP_US=2000 bash tools/gpu_session.sh $OUT/c2 \
  ab 3 '/q:(64|512|2048)/' pairs free one tests
grep -E "MemberPairs|FAILED" $OUT/c2/gpu_tests.log | head -20
f='PagedAttentionGpuTest.MemberPairs*'
timeout 170 compute-sanitizer --tool racecheck --print-limit 1000 \
  gpu_bundle/bin/attention_kernel_paged_attention_test --gtest_filter="$f" > $OUT/c2/racecheck_pairs.log 2>&1
echo "racecheck rc=$?"; grep -E 'PASSED|FAILED|RACECHECK SUMMARY|^\[ RUN' $OUT/c2/racecheck_pairs.log | tail -4
timeout 100 compute-sanitizer --tool memcheck \
  gpu_bundle/bin/attention_kernel_paged_attention_test --gtest_filter="$f" > $OUT/c2/memcheck_pairs.log 2>&1
echo "memcheck rc=$?"; grep -E 'PASSED|FAILED|ERROR SUMMARY|^\[ RUN' $OUT/c2/memcheck_pairs.log | tail -4
xz -f $OUT/c2/racecheck_pairs.log $OUT/c2/memcheck_pairs.log
