#!/usr/bin/env bash
# Builds this folder's carry, carry_lo.tar.xz (git-ignored), from the
# repository root at d43c58a or a later commit with the same kernel sources
# (~5 min on the 2-core machine with a warm Bazel cache; no earlier carry
# needed: each older benchmark is built from its revision's kernel sources
# by tools/ab_patch_build.sh --base):
#   bash tools/benchmarks/h200_2026-12-07_lane_offsets_in_tree/build_carry.sh
# The carry holds
#   gpu_bundle/     HEAD's bundle (tools/gpu_bundle.sh): LO and QR in the tree
#   ab/bench_main   eee7528's kernels (main before F2)
#   ab/bench_F2     66f206d's kernels (F2, before LO)
#   ab/bench_LO     d247f31's kernels (LO, before QR)
#   ab/bench_HEAD   the bundle's benchmark
# The sixty-sixth and sixty-seventh sessions built bench_main and bench_F2
# from scaled-in-exponent carries and bench_LO from d247f31's bundle; the
# sixty-eighth rebuilt all three this way (each holds its revision's
# attention/kernel sources, the benchmark's cases among them, and the
# checkout's planner and testing libraries).
set -euo pipefail
rm -rf ab  # (tools/gpu_bundle.sh replaces gpu_bundle/ itself)
bash tools/gpu_bundle.sh
bash tools/ab_wrapper.sh HEAD bundle
bash tools/ab_patch_build.sh main --base eee7528 paged_attention_benchmark
bash tools/ab_patch_build.sh F2 --base 66f206d paged_attention_benchmark
bash tools/ab_patch_build.sh LO --base d247f31 paged_attention_benchmark
tar -cf - gpu_bundle ab | xz -9 -T2 > carry_lo.tar.xz
