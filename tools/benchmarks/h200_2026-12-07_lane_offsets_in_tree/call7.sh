#!/usr/bin/env bash
# Call 7 (the warm machine after calls 1-2, same carry, carry_lo.tar.xz):
# call 1's A/B alone (ab_step.sh: main / F2 / LO / HEAD, three rounds, the
# head_dim 64 cases and controls), on whatever card is held.
set -u
[[ -d gpu_bundle ]] || tar -xJf carry_lo.tar.xz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/c7_gpu.txt
bash tools/benchmarks/h200_2026-12-07_lane_offsets_in_tree/ab_step.sh 150
echo "call: $SECONDS s"
