#!/usr/bin/env bash
# Call 2 (carry_tif2.tar.xz: build_variants.sh 2), any H100 or H200: the A/B
# of HEAD (66f206d) against Q (each key way's tiles two at a time), S6 (six
# ring stages at head_dim 64) and Q6 (both), main beside them, and of whole
# units (W1) against W1Q / W1S6 / W1Q6, three rounds each; SASS counts of P
# and PQ6; then Q6's kernel and modes tests. On an H200, the peer run of
# HEAD's bundle follows in the time left.
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
tar -xJf carry_tif2.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
AB_BENCH_LIMIT_S=90 GPU_SESSION_PACK=$OUT/ab.tar.xz timeout 150 \
  bash tools/gpu_session.sh $OUT/ab ab 3 \
  'DeviceCopy|hd:64/|Verify/heads:32_8/hd:(128|256)/batch:16/q:8/kv:8192/page:16/(iter|dtype)|Decode/heads:32_8/hd:128/batch:(1|32)/q:1/kv:(131072|16384)/page:16/iter|OneTile/' \
  main HEAD Q S6 Q6
AB_BENCH_LIMIT_S=60 GPU_SESSION_PACK=$OUT/w1.tar.xz timeout 90 \
  bash tools/gpu_session.sh $OUT/w1 ab 3 \
  'DeviceCopy|Verify/heads:32_8/hd:(64|128)/batch:16/q:8/kv:8192/page:16/(iter|dtype)' W1 W1Q W1S6 W1Q6
echo "ab: $SECONDS s"
bash tools/gpu_session.sh $OUT/sass sass P 'PagedAttentionKernel.*Li64E' sass PQ6 'PagedAttentionKernel.*Li64E' 2>&1 |
  grep -vE '^===' | head -20
mkdir -p $OUT/t
timeout 150 ab/test_Q6 > $OUT/t/test_Q6.log 2>&1; echo "test_Q6 rc=$?"
timeout 120 ab/modes_test_Q6 > $OUT/t/modes_test_Q6.log 2>&1; echo "modes_test_Q6 rc=$?"
grep -hE '^\[  (PASSED|FAILED)|tests? ran' $OUT/t/*.log
(cd $OUT && tar -cJf tests.tar.xz t && rm -rf t)
echo "tests: $SECONDS s"
grep -q H200 $OUT/gpu.txt || exit 0
GPU_SESSION_PACK=$OUT/peers.tar.xz timeout $((590 - SECONDS)) bash tools/gpu_session.sh $OUT/peers peers
echo "call: $SECONDS s"
