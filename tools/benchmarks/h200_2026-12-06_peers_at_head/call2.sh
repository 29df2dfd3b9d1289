#!/usr/bin/env bash
# Call 2 (device tool; carry: call 1's carry.tar.xz): the peer script over
# every case on whatever card the device gives (calls 1 and 1b got H100s for
# nvidia-h200, and the device tool keeps needs_h200 for work that does not fit
# an H100). An H100 run judges no H200 bar; its E and peer ratios are of one
# run on one card.
set -u
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c2_gpu.txt
GPU_SESSION_PACK=$OUT/c2.tar.xz timeout 540 bash tools/gpu_session.sh $OUT/c2 peers
echo "call: $SECONDS s"
