# Builds call 2's carry2.tar.xz from main's kernels (eee7528's sources, which
# are ab890cd's kernels) and the bundle of eee7528 (carry.tar.xz, the same
# kernels), run from the repository root: ab/bench_{S5,S6,F,S5F},
# ab/test_{S5,F} and ab/modes_test_S5 from the two patches with their macros
# set per variant (tools/ab_patch_build.sh); ab/bench_base runs the bundle's
# benchmark.
set -euo pipefail
d=tools/benchmarks/h200_2026-12-07_hd64_verify
tar -xJf carry.tar.xz  # gpu_bundle/
mkdir -p ab
bash tools/ab_wrapper.sh base bundle
build() {  # name stages scale_in_exp targets...
  bash tools/ab_patch_build.sh "$1" --base eee7528 \
    --patch $d/general_stages_hd64.patch --patch $d/scale_in_exp_hd64.patch \
    --define attention/kernel/kernel_traits.cuh:PA_GENERAL_STAGES_HD64=$2 \
    --define attention/kernel/general_consumers.cuh:PA_HD64_SCALE_IN_EXP=$3 "${@:4}"
}
build S5 5 0 paged_attention_benchmark paged_attention_test paged_attention_modes_test
build S6 6 0 paged_attention_benchmark
build F 4 1 paged_attention_benchmark paged_attention_test
build S5F 5 1 paged_attention_benchmark
tar -cf - gpu_bundle ab | xz -9 -T2 > carry2.tar.xz
