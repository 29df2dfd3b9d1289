#!/usr/bin/env bash
# Builds this folder's carry, carry_lo.tar.xz (git-ignored), from the
# repository root at d43c58a or a later commit with the same kernel sources:
#   bash tools/benchmarks/h200_2026-12-07_lane_offsets_in_tree/build_carry.sh
# It needs ../h200_2026-12-07_scale_in_exp_helper's carry_f.tar.xz (gpu_bundle/
# of 66f206d, ab/bench_main = eee7528's benchmark) and, for ab/bench_LO,
# carry_lo_d247f31.tar.xz (this script's carry as the sixty-sixth session
# built it, at d247f31). The carry holds
#   gpu_bundle/     HEAD's bundle (tools/gpu_bundle.sh): LO and QR in the tree
#   ab/bench_main   eee7528's benchmark (main's kernels before F2)
#   ab/bench_F2     66f206d's benchmark (F2, before LO)
#   ab/bench_LO     d247f31's benchmark (LO, before QR)
#   ab/bench_HEAD   the bundle's benchmark
set -euo pipefail
bench=gpu_bundle/bin/attention_kernel_paged_attention_benchmark
rm -rf gpu_bundle ab
mkdir -p /tmp/lo_carry
tar -xJf carry_lo_d247f31.tar.xz $bench && mv $bench /tmp/lo_carry/bench_LO
rm -rf gpu_bundle
tar -xJf carry_f.tar.xz $bench ab/bench_main && mv $bench /tmp/lo_carry/bench_F2
rm -rf gpu_bundle
bash tools/gpu_bundle.sh
mv /tmp/lo_carry/bench_F2 /tmp/lo_carry/bench_LO ab/ && rmdir /tmp/lo_carry
bash tools/ab_wrapper.sh HEAD bundle
tar -cf - gpu_bundle ab | xz -9 -T2 > carry_lo.tar.xz
