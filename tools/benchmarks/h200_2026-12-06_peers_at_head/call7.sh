#!/usr/bin/env bash
# Call 7 (device tool; carry: carry_probe.tar.xz = ab/one_tile_floor with the
# 264-CTA empty kernel): the probe three times. Prediction: predictions.txt,
# "call 7".
set -u
tar -xJf carry_probe.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $OUT/c7_gpu.txt
for i in 1 2 3; do timeout 60 ab/one_tile_floor 2>&1 | tee $OUT/c7_one_tile_floor_$i.txt; done
echo "call: $SECONDS s"
