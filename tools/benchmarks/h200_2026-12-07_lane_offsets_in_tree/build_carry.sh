#!/usr/bin/env bash
# Builds this folder's carry, carry_lo.tar.xz (git-ignored), from the
# repository root at 43279b4 or a later commit with the same kernel sources:
#   bash tools/benchmarks/h200_2026-12-07_lane_offsets_in_tree/build_carry.sh
# It needs ../h200_2026-12-07_scale_in_exp_helper's carry_f.tar.xz (gpu_bundle/
# of 66f206d, ab/bench_main = eee7528's benchmark). The carry holds
#   gpu_bundle/     HEAD's bundle (tools/gpu_bundle.sh): LO in the tree
#   ab/bench_main   eee7528's benchmark (main's kernels before F2)
#   ab/bench_F2     66f206d's benchmark (F2, before LO)
#   ab/bench_HEAD   the bundle's benchmark
set -euo pipefail
rm -rf gpu_bundle ab
tar -xJf carry_f.tar.xz gpu_bundle/bin/attention_kernel_paged_attention_benchmark ab/bench_main
mkdir -p /tmp/lo_carry && mv gpu_bundle/bin/attention_kernel_paged_attention_benchmark /tmp/lo_carry/bench_F2
rm -rf gpu_bundle
bash tools/gpu_bundle.sh
mv /tmp/lo_carry/bench_F2 ab/bench_F2 && rmdir /tmp/lo_carry
bash tools/ab_wrapper.sh HEAD bundle
tar -cf - gpu_bundle ab | xz -9 -T2 > carry_lo.tar.xz
