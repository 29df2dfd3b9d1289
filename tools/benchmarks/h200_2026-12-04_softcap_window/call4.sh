# Call 4 (carry.tar.xz: the bundle of fd3e3f2, TA): memcheck of the kernel test
# and of the modes test's softcap cases; racecheck of the modes test's softcap
# cases.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
bin=gpu_bundle/bin
mkdir -p $OUT/c4
start=$SECONDS
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 \
  $bin/attention_kernel_paged_attention_test --gtest_brief=1 > $OUT/c4/memcheck_kernel.log 2>&1
echo "memcheck kernel test rc=$? in $((SECONDS - start)) s"; tail -3 $OUT/c4/memcheck_kernel.log
for tool in memcheck racecheck; do
  start=$SECONDS
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 1 \
    $bin/attention_kernel_paged_attention_modes_test --gtest_filter='*Softcap*' \
    > $OUT/c4/${tool}_modes_softcap.log 2>&1
  echo "$tool modes softcap rc=$? in $((SECONDS - start)) s"; tail -3 $OUT/c4/${tool}_modes_softcap.log
done
cd $OUT && tar -cJf c4.tar.xz c4
