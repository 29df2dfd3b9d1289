# Call 4 (carry.tar.xz: gpu_bundle of the final build, kernels as 76f289e, +
# ab/bench_{pairs,one}): the A/B of call 1 again, every GPU test, racecheck
# and memcheck of the member pairs' test.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
GPU_SESSION_PACK=$OUT/c4.tar.xz AB_REPLAY_GAP_US=2000 bash tools/gpu_session.sh $OUT/c4 \
  ab 3 '/q:(64|512|2048)/' pairs one tests
f='PagedAttentionGpuTest.MemberPairs*'
timeout 170 compute-sanitizer --tool racecheck --print-limit 1000 \
  gpu_bundle/bin/attention_kernel_paged_attention_test --gtest_filter="$f" > $OUT/c4/racecheck_pairs.log 2>&1
echo "racecheck rc=$?"; grep -E 'PASSED|FAILED|RACECHECK SUMMARY' $OUT/c4/racecheck_pairs.log | tail -3
timeout 100 compute-sanitizer --tool memcheck \
  gpu_bundle/bin/attention_kernel_paged_attention_test --gtest_filter="$f" > $OUT/c4/memcheck_pairs.log 2>&1
echo "memcheck rc=$?"; grep -E 'PASSED|FAILED|ERROR SUMMARY' $OUT/c4/memcheck_pairs.log | tail -3
