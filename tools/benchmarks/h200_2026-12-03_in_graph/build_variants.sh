#!/usr/bin/env bash
# Builds, from a clean checkout of b323ca3 (kernels of 05439ad), ab/bench_HEAD (the checkout's benchmark),
# ab/bench_FM2 (fm2.patch: few-piece units of 9-64 rows merged by their last
# piece, inlined, head_dim <= 128) and ab/bench_FM2NT (fm2_never_taken.patch:
# the same kernel code, but the rule never picks the fused path for units of
# more than 8 rows), gpu_bundle/ of HEAD, and carry.tar.xz with all four.
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=tools/benchmarks/h200_2026-12-03_in_graph
git diff --quiet HEAD -- || { echo "build_variants: commit or stash first" >&2; exit 1; }
mkdir -p ab
build() {  # name [patch]
  if [[ -n ${2:-} ]]; then git apply "$here/$2"; fi
  bazel build --config=bundle //attention/kernel:paged_attention_benchmark
  cp -f bazel-bin/attention/kernel/paged_attention_benchmark "ab/bench_$1"
  if [[ -n ${2:-} ]]; then git checkout -- .; fi
}
build FM2 ../h200_2026-12-03_sm_pairs/fm2.patch
build FM2NT fm2_never_taken.patch
bash tools/gpu_bundle.sh
cp -f gpu_bundle/bin/attention_kernel_paged_attention_benchmark ab/bench_HEAD
tar -cf - gpu_bundle ab/bench_HEAD ab/bench_FM2 ab/bench_FM2NT | xz -9 -T2 > carry.tar.xz
ls -la carry.tar.xz
