#!/usr/bin/env bash
# Call 3 (same carry, carry_f.tar.xz: gpu_bundle/ of 66f206d): on an H200
# only (an H100 judges no bar of issue 10; call 1 tested this bundle on one),
# the peer script over every case, issue 10's "Done when" run of 66f206d (F2
# and its helper), first, since the session had ~700 s of device time left
# for start and call; then every GPU test in the time left.
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c3_gpu.txt
grep -q H200 $OUT/c3_gpu.txt || { echo "not an H200: nothing run"; exit 0; }
tar -xJf carry_f.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/c3.tar.xz timeout 450 bash tools/gpu_session.sh $OUT/c3 peers
echo "peers: $SECONDS s"
GPU_SESSION_PACK=$OUT/t.tar.xz timeout $((585 - SECONDS)) bash tools/gpu_session.sh $OUT/t tests
echo "call: $SECONDS s"
