#!/usr/bin/env bash
# Call 3 (same carry, carry_f.tar.xz: gpu_bundle/ of 66f206d): on an H200
# only (an H100 judges no bar of issue 10; call 1 tested this bundle on one).
# The session had ~350 s left for the call, so in the order of what each
# answers per second: call 1's A/B main / F2 / HEAD (~15 s; its E counters
# answer whether F2 meets head_dim 64 verify's bars), then the peer script
# over every case (~300 s, issue 10's "Done when" run of 66f206d), then
# every GPU test in whatever time is left.
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c3_gpu.txt
grep -q H200 $OUT/c3_gpu.txt || { echo "not an H200: nothing run"; exit 0; }
tar -xJf carry_f.tar.xz || exit 1
AB_BENCH_LIMIT_S=30 GPU_SESSION_PACK=$OUT/ab.tar.xz timeout 90 \
  bash tools/gpu_session.sh $OUT/ab ab 3 \
  'DeviceCopy|hd:64/|Verify/heads:32_8/hd:(128|256)/batch:16/q:8/kv:8192/page:16/(iter|dtype)|Decode/heads:32_8/hd:128/batch:(1|32)/q:1/kv:(131072|16384)/page:16/iter|OneTile/' \
  main F2 HEAD
echo "ab: $SECONDS s"
GPU_SESSION_PACK=$OUT/c3.tar.xz timeout 450 bash tools/gpu_session.sh $OUT/c3 peers
echo "peers: $SECONDS s"
GPU_SESSION_PACK=$OUT/t.tar.xz timeout $((585 - SECONDS)) bash tools/gpu_session.sh $OUT/t tests
echo "call: $SECONDS s"
