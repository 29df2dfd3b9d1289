# Builds the carry of this folder's calls, run from the repository root:
#   bash tools/benchmarks/h200_2026-12-07_consumer_cap/build_variants.sh CALL
# from main's bundle before F2 (carry.tar.xz: `bash tools/gpu_bundle.sh && cp
# gpu_bundle.tar.xz carry.tar.xz` at eee7528, whose kernels 15cd99f kept).
# It writes gpu_bundle/ (that bundle; for call 7, this commit's), ab/ and
# carry_callCALL.tar.xz (git-ignored). ab/bench_base runs the bundle's
# benchmark; ab/bench_NAME the variants; W* wrappers set
# PA_BENCH_PINNED_SPLITS (pinned_splits.patch: every unit in exactly N pieces,
# 1 = whole units, one CTA per SM; 0 = balanced as main). The kernel's sources
# are left at HEAD (commit edits to them first); NOTES.md is not touched.
#   1 (calls 1, 2): L2, L3, L4 (lookahead_shifted.patch); test_L3, modes_test_L3
#   3 (calls 3, 4): P (main's kernels) and W0 / W1 / W2; PS5, PS6 (the
#      general kernel's head_dim 64 ring at 5 / 6 stages,
#      ../h200_2026-12-07_hd64_verify/general_stages_hd64.patch) and W1S5, W1S6
#   5 (call 5): U2, U3 (lookahead_unrolled.patch) and W1U2, W1U3, W1; test_U2,
#      modes_test_U2
#   6 (call 6): F, W1F (../h200_2026-12-07_hd64_verify/scale_in_exp_hd64.patch),
#      X, W1X (skip_attend.patch), W1
#   7 (calls 7, 8; run at ad7cb39 or later): gpu_bundle/ of the checkout, main =
#      the benchmark of carry.tar.xz, F2 = the checkout's; W1 (main's kernels)
#      and W1F2
set -euo pipefail
call=$1
d=tools/benchmarks/h200_2026-12-07_consumer_cap
v=tools/benchmarks/h200_2026-12-07_hd64_verify
kernel_files="attention/kernel/attend_tile.cuh attention/kernel/decode_consumers.cuh attention/kernel/general_consumers.cuh"
rm -rf gpu_bundle ab && mkdir ab
tar -xJf carry.tar.xz  # gpu_bundle/
printf '#!/bin/sh\nexec "$(dirname "$0")/../gpu_bundle/bin/attention_kernel_paged_attention_benchmark" "$@"\n' > ab/bench_base
chmod +x ab/bench_base
# Only the kernel's sources are checked out and patched: NOTES.md beside
# them may hold uncommitted edits.
sources=$(git ls-files 'attention/kernel/*.cu' 'attention/kernel/*.cuh' 'attention/kernel/*.cc' \
  'attention/kernel/*.h')
trap "git checkout HEAD -- $sources" EXIT

# build NAME "PATCHES" "SED EXPRESSIONS (file:expression;...)" TARGET...
build() {
  local name=$1 patches=$2 seds=$3; shift 3
  # Every variant but call 7's F2 is main's kernels before F2 (eee7528's
  # files) plus its patches.
  local kernels=eee7528
  [[ $call == 7 && $name != P ]] && kernels=HEAD
  git checkout HEAD -- $sources
  git checkout $kernels -- $kernel_files
  [[ -n $patches ]] && git apply $patches
  local s
  IFS=';' read -ra s <<< "$seds"
  for e in "${s[@]}"; do [[ -n $e ]] && sed -i "${e#*:}" "${e%%:*}"; done
  bazel build --config=bundle "${@/#/\/\/attention\/kernel:}"
  for target in "$@"; do
    local out=ab/${target/paged_attention_benchmark/bench}
    out=${out/paged_attention_test/test}; out=${out/paged_attention_modes_test/modes_test}
    cp -f bazel-bin/attention/kernel/$target ${out}_$name && chmod u+w ${out}_$name && strip ${out}_$name
  done
  git checkout HEAD -- $sources
}
wrapper() {  # NAME SPLITS BINARY
  printf '#!/bin/sh\nPA_BENCH_PINNED_SPLITS=%s exec "$(dirname "$0")/%s" "$@"\n' $2 $3 > ab/bench_$1
  chmod +x ab/bench_$1
}
lookahead() { echo "attention/kernel/kv_producer.cuh:s/#define PA_PAGE_LOOKAHEAD_TILES .*/#define PA_PAGE_LOOKAHEAD_TILES $1/"; }
stages() { echo "attention/kernel/kernel_traits.cuh:s/#define PA_GENERAL_STAGES_HD64 .*/#define PA_GENERAL_STAGES_HD64 $1/"; }
tests=(paged_attention_benchmark paged_attention_test paged_attention_modes_test)

case $call in
  1)
    build L3 $d/lookahead_shifted.patch "$(lookahead 3)" "${tests[@]}"
    build L2 $d/lookahead_shifted.patch "$(lookahead 2)" paged_attention_benchmark
    build L4 $d/lookahead_shifted.patch "$(lookahead 4)" paged_attention_benchmark
    ;;
  3)
    build P $d/pinned_splits.patch "" paged_attention_benchmark
    for n in 5 6; do
      build PS$n "$d/pinned_splits.patch $v/general_stages_hd64.patch" "$(stages $n)" \
        paged_attention_benchmark
      wrapper W1S$n 1 bench_PS$n
    done
    wrapper W0 0 bench_P; wrapper W1 1 bench_P; wrapper W2 2 bench_P
    ;;
  5)
    build P $d/pinned_splits.patch "" paged_attention_benchmark
    build U2 "$d/lookahead_unrolled.patch $d/pinned_splits.patch" "$(lookahead 2)" "${tests[@]}"
    build U3 "$d/lookahead_unrolled.patch $d/pinned_splits.patch" "$(lookahead 3)" \
      paged_attention_benchmark
    wrapper W1 1 bench_P; wrapper W1U2 1 bench_U2; wrapper W1U3 1 bench_U3
    ;;
  6)
    build P $d/pinned_splits.patch "" paged_attention_benchmark
    build PF "$d/pinned_splits.patch $v/scale_in_exp_hd64.patch" \
      "attention/kernel/general_consumers.cuh:s/#define PA_HD64_SCALE_IN_EXP .*/#define PA_HD64_SCALE_IN_EXP 1/" \
      paged_attention_benchmark
    build PX "$d/pinned_splits.patch $d/skip_attend.patch" "" paged_attention_benchmark
    wrapper W1 1 bench_P; wrapper F 0 bench_PF; wrapper W1F 1 bench_PF
    wrapper X 0 bench_PX; wrapper W1X 1 bench_PX
    ;;
  7)
    mv ab/bench_base ab/bench_F2
    cp gpu_bundle/bin/attention_kernel_paged_attention_benchmark ab/bench_main
    build P $d/pinned_splits.patch "" paged_attention_benchmark
    build PF2 $d/pinned_splits.patch "" paged_attention_benchmark
    wrapper W1 1 bench_P; wrapper W1F2 1 bench_PF2
    rm -rf gpu_bundle && bash tools/gpu_bundle.sh > /dev/null
    ;;
  *) echo "no carry for call $call (1, 3, 5, 6, 7)"; exit 1 ;;
esac
tar -cf - gpu_bundle ab | xz -9 -T2 > carry_call$call.tar.xz
