#!/usr/bin/env bash
# Call 1 (carry_tif1.tar.xz: build_variants.sh 1; it ran as carry_wg32.tar.xz,
# built by ce3f45e's script, whose P also carried wgmma_32_rows.patch, at
# PA_WG32 0, where the patch leaves HEAD's code paths), any H100 or H200: the
# A/B of HEAD (66f206d) against G1 / G2 (head_dim 64 units of 17-32 rows on wgmma)
# with main (eee7528's benchmark: before F2) beside them, and of whole units
# (W1, one CTA per SM: the consumer-capped case) against W1G1 / W1G2, three
# rounds each; SASS counts of P (HEAD's kernels) and PG2; then G2's kernel and
# modes tests. On an H200, the peer run of HEAD's bundle follows in the time
# left (issue 10's "Done when" run; scale_in_exp_helper's call3.sh step 2).
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
tar -xJf carry_tif1.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
AB_BENCH_LIMIT_S=90 GPU_SESSION_PACK=$OUT/ab.tar.xz timeout 120 \
  bash tools/gpu_session.sh $OUT/ab ab 3 \
  'DeviceCopy|hd:64/|Verify/heads:32_8/hd:(128|256)/batch:16/q:8/kv:8192/page:16/(iter|dtype)|Decode/heads:32_8/hd:128/batch:(1|32)/q:1/kv:(131072|16384)/page:16/iter|OneTile/' \
  main HEAD G1 G2
AB_BENCH_LIMIT_S=60 GPU_SESSION_PACK=$OUT/w1.tar.xz timeout 90 \
  bash tools/gpu_session.sh $OUT/w1 ab 3 \
  'DeviceCopy|Verify/heads:32_8/hd:(64|128)/batch:16/q:8/kv:8192/page:16/(iter|dtype)' W1 W1G1 W1G2
echo "ab: $SECONDS s"
mkdir -p $OUT/t
bash tools/gpu_session.sh $OUT/sass sass P 'PagedAttentionKernel' sass PG2 'PagedAttentionKernel' 2>&1 |
  grep -E '^kernel|Li64E' | head -40
timeout 150 ab/test_G2 > $OUT/t/test_G2.log 2>&1; echo "test_G2 rc=$?"
timeout 120 ab/modes_test_G2 > $OUT/t/modes_test_G2.log 2>&1; echo "modes_test_G2 rc=$?"
grep -hE '^\[  (PASSED|FAILED)|tests? ran' $OUT/t/*.log
xz $OUT/t/*.log
echo "tests: $SECONDS s"
grep -q H200 $OUT/gpu.txt || exit 0
GPU_SESSION_PACK=$OUT/peers.tar.xz timeout $((590 - SECONDS)) bash tools/gpu_session.sh $OUT/peers peers
echo "call: $SECONDS s"
