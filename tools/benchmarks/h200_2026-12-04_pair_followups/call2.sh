# Call 2 (carry.tar.xz: gpu_bundle of a537c41): every GPU test, then memcheck
# of the member pairs' test (with its caller-made offsets).
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/c2.tar.xz bash tools/gpu_session.sh $OUT/c2 tests
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
timeout 250 compute-sanitizer --tool memcheck --error-exitcode 1 \
  gpu_bundle/bin/attention_kernel_paged_attention_test \
  --gtest_filter='*MemberPairs*' > $OUT/c2_memcheck.txt 2>&1
echo "memcheck rc=$?"; tail -4 $OUT/c2_memcheck.txt
