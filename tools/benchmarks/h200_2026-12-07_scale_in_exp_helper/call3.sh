#!/usr/bin/env bash
# Call 3 (same carry, carry_f.tar.xz: gpu_bundle/ of 66f206d): on an H200
# only (an H100 judges no bar of issue 10, and call 1 tested this bundle on
# one), every GPU test, then, if they pass, the peer script over every case:
# issue 10's "Done when" run of 66f206d (F2 and its helper).
set -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c3_gpu.txt
grep -q H200 $OUT/c3_gpu.txt || { echo "not an H200: nothing run"; exit 0; }
tar -xJf carry_f.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/t.tar.xz timeout 220 bash tools/gpu_session.sh $OUT/t tests | tee $OUT/t_summary.txt
grep -q "tests rc=0" $OUT/t_summary.txt || { echo "tests failed: no peer run"; exit 0; }
GPU_SESSION_PACK=$OUT/c3.tar.xz timeout $((590 - SECONDS)) bash tools/gpu_session.sh $OUT/c3 peers
echo "call: $SECONDS s"
