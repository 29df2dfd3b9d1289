# Builds the carry of this folder's calls, run from the repository root:
#   bash tools/benchmarks/h200_2026-12-07_consumer_cap/build_variants.sh CALL
# from main's bundle before F2 (carry.tar.xz: `bash tools/gpu_bundle.sh && cp
# gpu_bundle.tar.xz carry.tar.xz` at eee7528, whose kernels 15cd99f kept).
# It writes gpu_bundle/ (that bundle; for call 7, the checkout's), ab/ and
# carry_callCALL.tar.xz (git-ignored). ab/bench_base runs the bundle's
# benchmark; ab/bench_NAME the variants (tools/ab_patch_build.sh: main's
# kernels, eee7528's sources, plus the patches); W* wrappers set
# PA_BENCH_PINNED_SPLITS (pinned_splits.patch: every unit in exactly N pieces,
# 1 = whole units, one CTA per SM; 0 = balanced as main).
#   1 (calls 1, 2): L2, L3, L4 (lookahead_shifted.patch); test_L3, modes_test_L3
#   3 (calls 3, 4): P (main's kernels) and W0 / W1 / W2; PS5, PS6 (the
#      general kernel's head_dim 64 ring at 5 / 6 stages,
#      ../h200_2026-12-07_hd64_verify/general_stages_hd64.patch) and W1S5, W1S6
#   5 (call 5): U2, U3 (lookahead_unrolled.patch) and W1U2, W1U3, W1; test_U2,
#      modes_test_U2
#   6 (call 6): F, W1F (../h200_2026-12-07_hd64_verify/scale_in_exp_hd64.patch),
#      X, W1X (skip_attend.patch), W1
#   7 (calls 7-10; run at ad7cb39 or later): gpu_bundle/ of the checkout, main
#      = the benchmark of carry.tar.xz, F2 = the checkout's; W1 (main's
#      kernels) and W1F2
set -euo pipefail
call=$1
d=tools/benchmarks/h200_2026-12-07_consumer_cap
v=tools/benchmarks/h200_2026-12-07_hd64_verify
rm -rf gpu_bundle ab && mkdir ab
tar -xJf carry.tar.xz  # gpu_bundle/
bash tools/ab_wrapper.sh base bundle
main() { bash tools/ab_patch_build.sh "$1" --base eee7528 "${@:2}"; }  # main's kernels + patches
wrapper() {  # NAME SPLITS VARIANT: ab/bench_VARIANT with every unit in SPLITS pieces
  bash tools/ab_wrapper.sh $1 $3 PA_BENCH_PINNED_SPLITS=$2
}
lookahead=attention/kernel/kv_producer.cuh:PA_PAGE_LOOKAHEAD_TILES
bench=paged_attention_benchmark
tests=($bench paged_attention_test paged_attention_modes_test)

case $call in
  1)
    main L3 --patch $d/lookahead_shifted.patch --define $lookahead=3 "${tests[@]}"
    main L2 --patch $d/lookahead_shifted.patch --define $lookahead=2 $bench
    main L4 --patch $d/lookahead_shifted.patch --define $lookahead=4 $bench
    ;;
  3)
    main P --patch $d/pinned_splits.patch $bench
    for n in 5 6; do
      main PS$n --patch $d/pinned_splits.patch --patch $v/general_stages_hd64.patch \
        --define attention/kernel/kernel_traits.cuh:PA_GENERAL_STAGES_HD64=$n $bench
      wrapper W1S$n 1 PS$n
    done
    wrapper W0 0 P; wrapper W1 1 P; wrapper W2 2 P
    ;;
  5)
    main P --patch $d/pinned_splits.patch $bench
    main U2 --patch $d/lookahead_unrolled.patch --patch $d/pinned_splits.patch \
      --define $lookahead=2 "${tests[@]}"
    main U3 --patch $d/lookahead_unrolled.patch --patch $d/pinned_splits.patch \
      --define $lookahead=3 $bench
    wrapper W1 1 P; wrapper W1U2 1 U2; wrapper W1U3 1 U3
    ;;
  6)
    main P --patch $d/pinned_splits.patch $bench
    main PF --patch $d/pinned_splits.patch --patch $v/scale_in_exp_hd64.patch \
      --define attention/kernel/general_consumers.cuh:PA_HD64_SCALE_IN_EXP=1 $bench
    main PX --patch $d/pinned_splits.patch --patch $d/skip_attend.patch $bench
    wrapper W1 1 P; wrapper F 0 PF; wrapper W1F 1 PF
    wrapper X 0 PX; wrapper W1X 1 PX
    ;;
  7)
    mv ab/bench_base ab/bench_F2
    cp gpu_bundle/bin/attention_kernel_paged_attention_benchmark ab/bench_main
    main P --patch $d/pinned_splits.patch $bench
    bash tools/ab_patch_build.sh PF2 --patch $d/pinned_splits.patch $bench
    wrapper W1 1 P; wrapper W1F2 1 PF2
    rm -rf gpu_bundle && bash tools/gpu_bundle.sh > /dev/null
    ;;
  *) echo "no carry for call $call (1, 3, 5, 6, 7)"; exit 1 ;;
esac
tar -cf - gpu_bundle ab | xz -9 -T2 > carry_call$call.tar.xz
