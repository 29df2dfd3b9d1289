# Builds this folder's carry, run from the repository root at 47fcac7 or a
# later commit with the same kernel sources (66f206d's):
#   bash tools/benchmarks/h200_2026-12-07_wgmma_32_rows/build_variants.sh
# It needs ../h200_2026-12-07_scale_in_exp_helper's carry, carry_f.tar.xz
# (gpu_bundle/ of 66f206d; ab/bench_main = eee7528's benchmark, ab/bench_F2 =
# d4dff79's), and writes carry_wg32.tar.xz (git-ignored) with:
#   ab/bench_HEAD   66f206d's benchmark (the bundle's)
#   ab/bench_G1     + wgmma_32_rows.patch, PA_WG32 1 (padding warps run the softmax)
#   ab/bench_G2     + wgmma_32_rows.patch, PA_WG32 2 (padding warps skip it)
#   ab/bench_W1, ab/bench_W1G1, ab/bench_W1G2: the same kernels, every unit
#       whole (../h200_2026-12-07_consumer_cap/pinned_splits.patch: one CTA per
#       SM, where the consumers' math per tile caps the read rate on an H100)
#   ab/test_G2, ab/modes_test_G2: G2's kernel and modes tests
set -euo pipefail
d=tools/benchmarks/h200_2026-12-07_wgmma_32_rows
pinned=tools/benchmarks/h200_2026-12-07_consumer_cap/pinned_splits.patch
rm -rf gpu_bundle ab
tar -xJf carry_f.tar.xz  # gpu_bundle/, ab/
rm -f ab/bench_F2 ab/bench_HEAD
bash tools/ab_wrapper.sh HEAD bundle
build() {  # NAME WG32 TARGET...
  bash tools/ab_patch_build.sh "$1" --patch $pinned --patch $d/wgmma_32_rows.patch \
    --define attention/kernel/attend_tile.cuh:PA_WG32=$2 "${@:3}"
}
build P 0 paged_attention_benchmark
build G1 1 paged_attention_benchmark
build G2 2 paged_attention_benchmark paged_attention_test paged_attention_modes_test
for v in G1 G2; do mv ab/bench_$v ab/bench_P$v; done
bash tools/ab_wrapper.sh W1 P PA_BENCH_PINNED_SPLITS=1
for v in G1 G2; do
  bash tools/ab_wrapper.sh $v P$v PA_BENCH_PINNED_SPLITS=0
  bash tools/ab_wrapper.sh W1$v P$v PA_BENCH_PINNED_SPLITS=1
done
tar -cf - gpu_bundle ab | xz -9 -T2 > carry_wg32.tar.xz
