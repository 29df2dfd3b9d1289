#!/usr/bin/env bash
# Call 1 (device tool, kind nvidia-h200; carry: carry.tar.xz = gpu_bundle of
# 51380c2 (sources of the kernels, benchmark and tests as ad5d267) and
# ab/one_tile_floor built by the nvcc line in
# tools/benchmarks/probes/one_tile_floor.cu): the one-tile floor probe with its
# `held` mode twice, then the peer script over every case. H200 only: on an
# H100 only the probe runs (an H100 peer run judges no bar).
set -u
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c1_gpu.txt
for i in 1 2; do timeout 60 ab/one_tile_floor 2>&1 | tee $OUT/c1_one_tile_floor_$i.txt; done
grep -q H200 $OUT/c1_gpu.txt || { echo "not an H200: no peer run"; exit 0; }
GPU_SESSION_PACK=$OUT/c1.tar.xz timeout 480 bash tools/gpu_session.sh $OUT/c1 peers
echo "call: $SECONDS s"
