# Builds call 2's carry2.tar.xz from main (019cf22, whose kernels are
# ab890cd's) and the bundle of eee7528 (carry.tar.xz, the same kernels), run
# from the repository root: ab/bench_{S5,S6,F,S5F}, ab/test_{S5,F} and
# ab/modes_test_S5 from the two patches with their macros set per variant;
# ab/bench_base runs the bundle's benchmark. The checkout is left as it was.
set -euo pipefail
d=tools/benchmarks/h200_2026-12-07_hd64_verify
tar -xJf carry.tar.xz  # gpu_bundle/
mkdir -p ab
printf '#!/bin/sh\nexec "$(dirname "$0")/../gpu_bundle/bin/attention_kernel_paged_attention_benchmark" "$@"\n' > ab/bench_base
chmod +x ab/bench_base
git apply $d/general_stages_hd64.patch $d/scale_in_exp_hd64.patch
# Restore only the patched sources: NOTES.md beside them may hold edits.
trap 'git checkout attention/kernel/kernel_traits.cuh attention/kernel/attend_tile.cuh attention/kernel/general_consumers.cuh' EXIT
build() {  # name stages scale_in_exp targets...
  local name=$1 stages=$2 fused=$3; shift 3
  sed -i "s/#define PA_GENERAL_STAGES_HD64 .*/#define PA_GENERAL_STAGES_HD64 $stages/" attention/kernel/kernel_traits.cuh
  sed -i "s/#define PA_HD64_SCALE_IN_EXP .*/#define PA_HD64_SCALE_IN_EXP $fused/" attention/kernel/general_consumers.cuh
  bazel build --config=bundle "${@/#/\/\/attention\/kernel:}"
  for target in "$@"; do
    local out=ab/${target/paged_attention_benchmark/bench}
    out=${out/paged_attention_test/test}; out=${out/paged_attention_modes_test/modes_test}
    cp -f bazel-bin/attention/kernel/$target ${out}_$name && chmod u+w ${out}_$name && strip ${out}_$name
  done
}
build S5 5 0 paged_attention_benchmark paged_attention_test paged_attention_modes_test
build S6 6 0 paged_attention_benchmark
build F 4 1 paged_attention_benchmark paged_attention_test
build S5F 5 1 paged_attention_benchmark
tar -cf - gpu_bundle ab | xz -9 -T2 > carry2.tar.xz
