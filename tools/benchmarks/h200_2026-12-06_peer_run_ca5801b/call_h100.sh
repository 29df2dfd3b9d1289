#!/usr/bin/env bash
# The peer script over every case on whatever card the device tool gives
# (kind nvidia-h100-x1; carry: carry.tar.xz = gpu_bundle.tar.xz of ca5801b).
# The fifty-sixth session ran it on the H100 that an ask for nvidia-h200 had
# started (ask 24): a reading of main's kernels beside the H200 bars,
# not a judgement of them (the issue's bars are the H200's).
set -u
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/h100_gpu.txt
GPU_SESSION_PACK=$OUT/h100.tar.xz timeout 560 bash tools/gpu_session.sh $OUT/h100 peers
echo "call: $SECONDS s"
