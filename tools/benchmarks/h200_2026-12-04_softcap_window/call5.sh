# Call 5 (carry.tar.xz: the bundle of a7faf9c, TS; ab/bench_ta = fd3e3f2's
# benchmark, ab/bench_ts = a7faf9c's): A/B of TA and TS on the softcap cases and
# their twins, every GPU test on TS, memcheck of the kernel test.
tar -xJf carry.tar.xz || exit 1
F='Softcap/|(Decode|Verify|Prefill)/heads:32_8/hd:(128|256)/batch:(32/q:1/kv:16384|16/q:(8|64)/kv:8192|4/q:512/kv:4096)/page:16/iterations'
GPU_SESSION_PACK=$OUT/c5.tar.xz bash tools/gpu_session.sh $OUT/c5 ab 3 "$F" ta ts tests 2>&1 | tail -30
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
start=$SECONDS
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 \
  gpu_bundle/bin/attention_kernel_paged_attention_test --gtest_brief=1 > $OUT/c5/memcheck_kernel.log 2>&1
echo "memcheck kernel test rc=$? in $((SECONDS - start)) s"; tail -3 $OUT/c5/memcheck_kernel.log
cd $OUT && tar -cJf c5.tar.xz c5
