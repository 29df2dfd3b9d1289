# Call 3 (carry.tar.xz: gpu_bundle of 2b2ace0 + ab/bench_{pairs,free,one} as
# call 2): the member pairs' test (turns now taken: a hang would show here),
# then the 3-way A/B of the compute-bound cases.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/c3
timeout 120 gpu_bundle/bin/attention_kernel_paged_attention_test \
  --gtest_filter='PagedAttentionGpuTest.MemberPairs*' > $OUT/c3/member_pairs_test.log 2>&1
echo "member pairs test rc=$?"; grep -E 'ERRSTAT|OK|PASSED|FAILED' $OUT/c3/member_pairs_test.log | cut -c1-150
GPU_SESSION_PACK=$OUT/c3.tar.xz AB_REPLAY_GAP_US=2000 bash tools/gpu_session.sh $OUT/c3 \
  ab 3 '/q:(64|512|2048)/' pairs free one
