# Builds this folder's carries, run from the repository root at 47fcac7 or a
# later commit with the same kernel sources (66f206d's):
#   bash tools/benchmarks/h200_2026-12-07_tiles_in_flight/build_variants.sh CALL
# It needs ../h200_2026-12-07_scale_in_exp_helper's carry, carry_f.tar.xz
# (gpu_bundle/ of 66f206d; ab/bench_main = eee7528's benchmark, before F2),
# and writes carry_tifCALL.tar.xz (git-ignored). Every carry has
#   ab/bench_main, ab/bench_HEAD (66f206d's benchmark: the bundle's),
#   ab/bench_W1     HEAD's kernels with every unit whole
#                   (../h200_2026-12-07_consumer_cap/pinned_splits.patch: one
#                   CTA per SM, where the consumers' math per tile caps the
#                   read rate on an H100), PA_BENCH_PINNED_SPLITS=1 over bench_P
#   1 (call 1): G1, G2: wgmma_32_rows.patch with PA_WG32 1 / 2 (head_dim 64
#      units of 17-32 rows on wgmma; the padding warps run / skip the
#      softmax); W1G1, W1G2; test_G2, modes_test_G2
#   2 (call 2): Q (two_tiles_in_flight.patch: each key way's tiles two at a
#      time), S6 (../h200_2026-12-07_hd64_verify/general_stages_hd64.patch at
#      6 stages), Q6 (both); W1Q, W1S6, W1Q6; test_Q6, modes_test_Q6
#   3 (call 3): LO (lane_offsets.patch: each lane's ldmatrix offsets in a K / V
#      tile computed once, not every tile, in the general and tree kernels at
#      head_dim 64); W1LO; test_LO, modes_test_LO
set -euo pipefail
call=$1
d=tools/benchmarks/h200_2026-12-07_tiles_in_flight
pinned=tools/benchmarks/h200_2026-12-07_consumer_cap/pinned_splits.patch
stages=tools/benchmarks/h200_2026-12-07_hd64_verify/general_stages_hd64.patch
stages6=attention/kernel/kernel_traits.cuh:PA_GENERAL_STAGES_HD64=6
bench=paged_attention_benchmark
tests=($bench paged_attention_test paged_attention_modes_test)
rm -rf gpu_bundle ab
tar -xJf carry_f.tar.xz  # gpu_bundle/, ab/
rm -f ab/bench_F2 ab/bench_HEAD
bash tools/ab_wrapper.sh HEAD bundle
build() { bash tools/ab_patch_build.sh "$1" --patch $pinned "${@:2}"; }  # HEAD + pinned + ...
variant() {  # NAME: NAME (balanced) and W1NAME (whole units) over ab/bench_PNAME
  mv ab/bench_$1 ab/bench_P$1
  bash tools/ab_wrapper.sh $1 P$1 PA_BENCH_PINNED_SPLITS=0
  bash tools/ab_wrapper.sh W1$1 P$1 PA_BENCH_PINNED_SPLITS=1
}
build P $bench
bash tools/ab_wrapper.sh W1 P PA_BENCH_PINNED_SPLITS=1
wg32=attention/kernel/attend_tile.cuh:PA_WG32
case $call in
  1)
    build G1 --patch $d/wgmma_32_rows.patch --define $wg32=1 $bench
    build G2 --patch $d/wgmma_32_rows.patch --define $wg32=2 "${tests[@]}"
    variant G1; variant G2
    ;;
  2)
    build Q --patch $d/two_tiles_in_flight.patch $bench
    build S6 --patch $stages --define $stages6 $bench
    build Q6 --patch $stages --patch $d/two_tiles_in_flight.patch --define $stages6 "${tests[@]}"
    variant Q; variant S6; variant Q6
    ;;
  3)
    build LO --patch $d/lane_offsets.patch "${tests[@]}"
    variant LO
    ;;
  *) echo "no carry for call $call (1, 2, 3)"; exit 1 ;;
esac
tar -cf - gpu_bundle ab | xz -9 -T2 > carry_tif$call.tar.xz
