#!/usr/bin/env bash
# Builds carry_qr.tar.xz (git-ignored) from the repository root at 43279b4 or
# a later commit with the same kernel sources, after build_carry.sh:
#   bash tools/benchmarks/h200_2026-12-07_lane_offsets_in_tree/build_qr_carry.sh
# carry_lo.tar.xz's gpu_bundle/ and ab/ plus
#   ab/bench_W1     HEAD's kernels with every unit whole
#                   (../h200_2026-12-07_consumer_cap/pinned_splits.patch: one
#                   CTA per SM, where the consumers' math per tile caps the
#                   read rate on an H100), PA_BENCH_PINNED_SPLITS=1 over bench_P
#   ab/bench_QR, ab/bench_W1QR   query_fragments.patch (each consumer warp's
#                   Q fragments loaded once per segment, not every key tile,
#                   head_dim 64 general and tree kernels), balanced / whole
#   ab/test_QR, ab/modes_test_QR
set -euo pipefail
d=tools/benchmarks/h200_2026-12-07_lane_offsets_in_tree
pinned=tools/benchmarks/h200_2026-12-07_consumer_cap/pinned_splits.patch
rm -rf gpu_bundle ab
tar -xJf carry_lo.tar.xz
build() { bash tools/ab_patch_build.sh "$1" --patch $pinned "${@:2}"; }  # HEAD + pinned + ...
build P paged_attention_benchmark
bash tools/ab_wrapper.sh W1 P PA_BENCH_PINNED_SPLITS=1
build QR --patch $d/query_fragments.patch paged_attention_benchmark paged_attention_test \
  paged_attention_modes_test
mv ab/bench_QR ab/bench_PQR
bash tools/ab_wrapper.sh QR PQR PA_BENCH_PINNED_SPLITS=0
bash tools/ab_wrapper.sh W1QR PQR PA_BENCH_PINNED_SPLITS=1
tar -cf - gpu_bundle ab | xz -9 -T2 > carry_qr.tar.xz
