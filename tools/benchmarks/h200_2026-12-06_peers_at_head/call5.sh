#!/usr/bin/env bash
# Call 5 (device tool; carry: carry_probe.tar.xz = ab/one_tile_floor and
# ab/cluster_occupancy, each built by the nvcc line in its source under
# tools/benchmarks/probes/): how many workers a cluster-launched persistent
# kernel would keep resident. Prediction: predictions.txt, "call 5".
set -u
tar -xJf carry_probe.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $OUT/c5_gpu.txt
timeout 60 ab/cluster_occupancy 2>&1 | tee $OUT/c5_cluster_occupancy.txt
echo "call: $SECONDS s"
