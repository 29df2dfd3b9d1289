# Call 3 (carry.tar.xz: the bundle of 784ca74): sanitizers where the
# head_dim 256 general and tree kernels run most.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
b=gpu_bundle/bin; mkdir -p $OUT/r
cat gpu_bundle/REVISION
echo "== memcheck paged_attention_modes_test"
timeout 240 compute-sanitizer --tool memcheck --error-exitcode 1 $b/attention_kernel_paged_attention_modes_test > $OUT/r/memcheck_modes.log 2>&1; echo "rc=$?"; grep -E "^\[  (PASSED|FAILED) |ERROR SUMMARY|tests ran" $OUT/r/memcheck_modes.log; grep -E "^\[ RUN" $OUT/r/memcheck_modes.log | tail -1
echo "== memcheck graph_replay_stress_test"
STRESS_ITERATIONS=200 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 $b/attention_kernel_graph_replay_stress_test --gtest_brief=1 > $OUT/r/memcheck_graph.log 2>&1; echo "rc=$?"; tail -4 $OUT/r/memcheck_graph.log
echo "== racecheck fp16 sweep head_dim 256 pages 1 / 256"
timeout 120 compute-sanitizer --tool racecheck --print-limit 100000 $b/attention_kernel_paged_attention_test --gtest_filter='*Sweep*float16_hd256_page1:*Sweep*float16_hd256_page256' > $OUT/r/racecheck_sweep.log 2>&1; echo "rc=$?"; grep -E "^\[  (PASSED|FAILED) |RACECHECK SUMMARY" $OUT/r/racecheck_sweep.log
echo "== racecheck modes test (head_dim 256 runs inside each case)"
timeout 150 compute-sanitizer --tool racecheck --print-limit 100000 $b/attention_kernel_paged_attention_modes_test --gtest_filter='*TARGET_VERIFY*:*DRAFT_EXTEND*' > $OUT/r/racecheck_modes.log 2>&1; echo "rc=$?"; grep -E "^\[  (PASSED|FAILED) |RACECHECK SUMMARY" $OUT/r/racecheck_modes.log; grep -E "^\[ RUN" $OUT/r/racecheck_modes.log | tail -1
cd $OUT && tar -cJf call3.tar.xz r
