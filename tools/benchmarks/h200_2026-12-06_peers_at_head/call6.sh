#!/usr/bin/env bash
# Call 6 (device tool; carry: carry_probe.tar.xz = ab/one_tile_floor and
# ab/cluster_occupancy built from the merged sources): the probes again, so
# that the committed sources are the ones whose figures are recorded.
set -u
tar -xJf carry_probe.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $OUT/c6_gpu.txt
for i in 1 2 3; do timeout 60 ab/one_tile_floor 2>&1 | tee $OUT/c6_one_tile_floor_$i.txt; done
timeout 60 ab/cluster_occupancy 2>&1 | tee $OUT/c6_cluster_occupancy.txt
echo "call: $SECONDS s"
