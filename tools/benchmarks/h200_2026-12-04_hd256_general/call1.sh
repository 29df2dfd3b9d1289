tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
b=gpu_bundle/bin; mkdir -p $OUT/r
GPU_SESSION_PACK=$OUT/s.tar.xz bash tools/gpu_session.sh $OUT/s tests ab 3 'hd:256|Decode/heads:32_8/hd:128/batch:128|Verify/heads:32_8/hd:128/batch:16/q:8/kv:8192/page:16' BASE RS 2>&1 | tail -40
echo "== memcheck paged_attention_test"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 $b/attention_kernel_paged_attention_test --gtest_brief=1 > $OUT/r/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -3 $OUT/r/memcheck.log
echo "== racecheck hd256 sweep + tree"
timeout 100 compute-sanitizer --tool racecheck --print-limit 100000 $b/attention_kernel_paged_attention_test --gtest_filter='*Sweep*hd256_page16*:*DecodeKernelMatchesGeneralKernelBitForBit*' > $OUT/r/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E 'PASSED|FAILED|RACECHECK SUMMARY' $OUT/r/racecheck.log
timeout 120 compute-sanitizer --tool racecheck --print-limit 100000 $b/attention_kernel_paged_attention_modes_test --gtest_filter='*Tree*' > $OUT/r/racecheck_tree.log 2>&1; echo "racecheck tree rc=$?"; grep -E 'PASSED|FAILED|RACECHECK SUMMARY|tests ran' $OUT/r/racecheck_tree.log
cd $OUT && tar -cJf call1.tar.xz r
