# Call 1 (2026-12-05, the forty-eighth session): the short-KV kernel (`SKV1`).
# Carry: carry.tar.xz = gpu_bundle/ of the commit under test and two wrappers
# of its benchmark: ab/bench_SHORT (as built) and ab/bench_MAIN
# (PA_ATTENTION_NO_SHORT_KV=1: the persistent kernel), so one binary times
# both kernels. Prediction: predictions.txt.
#   1. A/B of the OneTile cases (5 rounds, order rotated), the benchmark's
#      own short_kv counter saying which kernel ran;
#   2. every GPU test (the new ShortKvKernelTest, the stress test's eager
#      short-KV launches against persistent-kernel replays bit for bit);
#   3. memcheck of the new test.
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c1_gpu.txt
export GPU_SESSION_PACK=$OUT/c1_pack.tar.xz
AB_BENCH_LIMIT_S=90 timeout 260 bash tools/gpu_session.sh $OUT/c1 ab 5 'OneTile' SHORT MAIN
cp $OUT/c1/ab_table.txt $OUT/c1_ab_table.txt
timeout 300 bash tools/gpu_session.sh $OUT/c1 tests
cp $OUT/c1/gpu_tests.log $OUT/c1_gpu_tests.log
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 \
  gpu_bundle/bin/attention_kernel_paged_attention_test --gtest_filter='*ShortKv*' \
  --gtest_brief=1 > $OUT/c1_short_memcheck.txt 2>&1
echo "short-KV memcheck rc=$?"; tail -3 $OUT/c1_short_memcheck.txt
echo "call: $SECONDS s"
