#!/usr/bin/env bash
# Call 8 (device tool; carry: carry.tar.xz = gpu_bundle of 9798e44 = 4a60f29 and records, the
# benchmark with OneTileFullGrid): the one-tile families, three rounds of the
# benchmark's own three repetitions each. Prediction: predictions.txt,
# "call 8".
set -u
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $OUT/c8_gpu.txt
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
for round in 1 2 3; do
  timeout 100 gpu_bundle/bin/attention_kernel_paged_attention_benchmark \
    --benchmark_filter='OneTile' --benchmark_out=$OUT/c8_one_tile_r$round.json \
    --benchmark_out_format=json 2>&1 | grep -E '_median' | sed "s/^/r$round /" | cut -c1-170
done | tee $OUT/c8_one_tile.txt
echo "call: $SECONDS s"
