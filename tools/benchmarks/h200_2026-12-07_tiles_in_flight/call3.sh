#!/usr/bin/env bash
# Call 3 (carry_tif3.tar.xz: build_variants.sh 3), any H100 or H200: the A/B
# of main / HEAD (66f206d) / LO (each lane's ldmatrix offsets computed once)
# and of whole units W1 / W1LO, three rounds each. On an H100 then LO's kernel
# and modes tests; on an H200 (where the A/B's main / HEAD rows are F2's
# first H200 figures) the peer run of HEAD's bundle comes first, the tests in
# what is left of the session's device time. LIMIT_S: the seconds the call may
# take (the run's timeout_s; default 590), which the peers and tests share.
set -u
LIMIT_S=${LIMIT_S:-590}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
tar -xJf carry_tif3.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
AB_BENCH_LIMIT_S=90 GPU_SESSION_PACK=$OUT/ab.tar.xz timeout 120 \
  bash tools/gpu_session.sh $OUT/ab ab 3 \
  'DeviceCopy|hd:64/|Verify/heads:32_8/hd:(128|256)/batch:16/q:8/kv:8192/page:16/(iter|dtype)|Decode/heads:32_8/hd:128/batch:(1|32)/q:1/kv:(131072|16384)/page:16/iter|OneTile/' \
  main HEAD LO
AB_BENCH_LIMIT_S=60 GPU_SESSION_PACK=$OUT/w1.tar.xz timeout 90 \
  bash tools/gpu_session.sh $OUT/w1 ab 3 \
  'DeviceCopy|Verify/heads:32_8/hd:(64|128)/batch:16/q:8/kv:8192/page:16/(iter|dtype)' W1 W1LO
echo "ab: $SECONDS s"
if grep -q H200 $OUT/gpu.txt; then
  GPU_SESSION_PACK=$OUT/peers.tar.xz timeout $((LIMIT_S - 20 - SECONDS)) \
    bash tools/gpu_session.sh $OUT/peers peers
  echo "peers: $SECONDS s"
fi
mkdir -p $OUT/t
timeout $(((LIMIT_S - 10 - SECONDS) / 2)) ab/test_LO > $OUT/t/test_LO.log 2>&1; echo "test_LO rc=$?"
timeout $((LIMIT_S - 10 - SECONDS)) ab/modes_test_LO > $OUT/t/modes_test_LO.log 2>&1; echo "modes_test_LO rc=$?"
grep -hE '^\[  (PASSED|FAILED)|tests? ran' $OUT/t/*.log
(cd $OUT && tar -cJf tests.tar.xz t && rm -rf t)
echo "call: $SECONDS s"
