# Call 6 (carry.tar.xz: the bundle of this commit): the modes test's
# SoftcapWhereTanhSaturates after its case description was built once for the
# trace and the CASE line (the test, not the kernel, changed).
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/c6
timeout 200 gpu_bundle/bin/attention_kernel_paged_attention_modes_test \
  --gtest_filter='*SoftcapWhereTanhSaturates*' > $OUT/c6/softcap_test.log 2>&1
echo "rc=$?"
grep -E '^\[  (PASSED|FAILED) |^CASE' $OUT/c6/softcap_test.log | head -40
grep -E 'BOUNDSTAT' $OUT/c6/softcap_test.log | awk '{print $NF}' | sort -n | tail -1 | sed 's/^/largest use of the bound /'
xz -9 $OUT/c6/softcap_test.log
