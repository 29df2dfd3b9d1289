# Call 5 (carry_call5.tar.xz: build_variants.sh 5): A/B of main's benchmark
# (base) against U2 and U3 (page ids 2 / 3 tiles ahead, the loop unrolled),
# and of whole units with main's kernels (W1) against whole units with U2 /
# U3 (W1U2, W1U3), three rounds, order rotated, on call 1's cases; then the
# kernel and modes tests built with U2.
tar -xJf carry_call5.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
export GPU_SESSION_PACK=$OUT/call5.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
AB_BENCH_LIMIT_S=75 bash tools/gpu_session.sh $OUT/r ab 3 \
  'DeviceCopy|Verify/heads:32_8/hd:(64|128|256)/batch:16/q:8/kv:8192/page:16/(iter|dtype)|Verify/heads:64_8/hd:128/batch:(1|16)/q:8/kv:(131072|32768)/page:16/iter|Decode/heads:32_8/hd:(64|128)/batch:(1|32)/q:1/kv:(131072|16384)/page:16/iter|DraftExtend/heads:32_8/hd:64/|PageSweep|OneTile/|Skewed.*q:1|Uniform.*q:1' \
  base U2 U3 W1 W1U2 W1U3
timeout 200 ab/test_U2 > $OUT/r/test_U2.log 2>&1; echo "test_U2 rc=$?"
timeout 120 ab/modes_test_U2 > $OUT/r/modes_test_U2.log 2>&1; echo "modes_test_U2 rc=$?"
grep -hE '^\[  (PASSED|FAILED)|tests? ran' $OUT/r/test_U2.log $OUT/r/modes_test_U2.log
(cd $OUT/r && tar -cJf $OUT/call5.tar.xz .)
