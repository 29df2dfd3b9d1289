# Call 6 (carry.tar.xz: gpu_bundle of b78334a (OVL2 for capped requests
# only), ab/bench_BASE as call 5): A/B over the compute-bound cases, 3
# rounds, then the kernel tests that run the member pairs and the softcap
# (the device time left did not hold every GPU test).
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/c6.tar.xz AB_REPLAY_GAP_US=2000 bash tools/gpu_session.sh $OUT/c6 \
  ab 3 '/q:(64|512|2048)/' BASE NEW
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
gpu_bundle/bin/attention_kernel_paged_attention_test --gtest_filter='*MemberPairs*:*Softcap*' \
  > $OUT/c6_tests.txt 2>&1; echo "kernel test rc=$?"
gpu_bundle/bin/attention_kernel_paged_attention_modes_test --gtest_filter='*Softcap*' \
  >> $OUT/c6_tests.txt 2>&1; echo "modes test rc=$?"
grep -E "^\[  (PASSED|FAILED) |Failure" $OUT/c6_tests.txt | sort | uniq -c
