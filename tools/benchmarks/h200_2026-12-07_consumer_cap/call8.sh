# Call 8 (carry_call7.tar.xz, on call 7's machine): memcheck of the kernel
# test's targeted cases (the sweep left out: call 7's run_tests.sh ran it)
# and racecheck part 1 (the kernel test's first targeted cases, among them
# DecodeKernelMatchesGeneralKernelBitForBit) of this commit's bundle.
[[ -d gpu_bundle ]] || tar -xJf carry_call7.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/r
timeout 130 compute-sanitizer --tool memcheck --error-exitcode 1 \
  gpu_bundle/bin/attention_kernel_paged_attention_test --gtest_filter='-*Sweep*' > $OUT/r/memcheck.log 2>&1
echo "memcheck rc=$?"
grep -E 'PASSED|FAILED|ERROR SUMMARY' $OUT/r/memcheck.log
RACECHECK_PARTS="1" GPU_SESSION_PACK=$OUT/call8.tar.xz bash tools/gpu_session.sh $OUT/r racecheck 2>&1 | tail -6
