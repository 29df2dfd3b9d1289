#!/usr/bin/env bash
# Call 4 (device tool; carry: carry_probe.tar.xz = ab/one_tile_floor built by
# the nvcc line in tools/benchmarks/probes/one_tile_floor.cu, with the split
# kernels): the probe three times (every kernel checked against float64 first,
# then timed warm, held and flushed). Prediction: predictions.txt, "call 4".
set -u
tar -xJf carry_probe.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c4_gpu.txt
for i in 1 2 3; do timeout 60 ab/one_tile_floor 2>&1 | tee $OUT/c4_one_tile_floor_$i.txt; done
echo "call: $SECONDS s"
