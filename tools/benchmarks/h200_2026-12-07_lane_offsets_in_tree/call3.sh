#!/usr/bin/env bash
# Call 3 (any H100 or H200, for when two failed H200 starts left too little
# device time for calls 1 and 2; carry carry_qr.tar.xz): the A/B of HEAD / QR
# and W1 / W1QR (~60 s), every GPU test of HEAD's bundle (LO in the tree),
# then racecheck parts 1 and 4 (the first targeted cases, which run the
# head_dim 64 general kernel against the others, and the tree cases).
# LIMIT_S: the call's timeout_s (default 590).
set -u
LIMIT_S=${LIMIT_S:-590}
tar -xJf carry_qr.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
AB_BENCH_LIMIT_S=45 GPU_SESSION_PACK=$OUT/ab.tar.xz timeout 60 \
  bash tools/gpu_session.sh $OUT/ab ab 3 \
  'DeviceCopy|hd:64/|Verify/heads:32_8/hd:(128|256)/batch:16/q:8/kv:8192/page:16/(iter|dtype)' HEAD QR
AB_BENCH_LIMIT_S=45 GPU_SESSION_PACK=$OUT/w1.tar.xz timeout 60 \
  bash tools/gpu_session.sh $OUT/w1 ab 3 \
  'DeviceCopy|Verify/heads:32_8/hd:(64|128)/batch:16/q:8/kv:8192/page:16/(iter|dtype)' W1 W1QR
echo "ab: $SECONDS s"
GPU_SESSION_PACK=$OUT/t.tar.xz timeout 250 bash tools/gpu_session.sh $OUT/t tests | tee $OUT/t_summary.txt
echo "tests: $SECONDS s"
RACECHECK_PARTS="1 4" GPU_SESSION_PACK=$OUT/r.tar.xz timeout $((LIMIT_S - 5 - SECONDS)) \
  bash tools/gpu_session.sh $OUT/r racecheck
echo "call: $SECONDS s"
