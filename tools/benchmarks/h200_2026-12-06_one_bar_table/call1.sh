#!/usr/bin/env bash
# Call 1 (device tool, kind nvidia-h200; carry: carry.tar.xz = gpu_bundle.tar.xz
# of 815b0ac, whose kernels are ab890cd's and whose benchmark has QW's warm
# timing and the OneTileFullGrid case): the peer script over every case, on an
# H200 only (an H100 judges no bar of the issue; the fifty-first session ran
# main's sources on one).
set -u
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c1_gpu.txt
grep -q H200 $OUT/c1_gpu.txt || { echo "not an H200: no peer run"; exit 0; }
GPU_SESSION_PACK=$OUT/c1.tar.xz timeout 560 bash tools/gpu_session.sh $OUT/c1 peers
echo "call: $SECONDS s"
