#!/usr/bin/env bash
# Builds ab/bench_{base,Ug,Uq,F,UgF} (the benchmark binary of each variant of
# this folder, see call1.sh) from a clean checkout of the revision the patches
# apply to, restoring the kernel sources after each build.
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=tools/benchmarks/h200_2026-12-01_uniform_descriptors
mkdir -p ab
build() {  # name patch...
  local name=$1; shift
  for patch in "$@"; do git apply "$here/$patch"; done
  bazel build --config=bundle //attention/kernel:paged_attention_benchmark 2>&1 | tail -1
  cp -f bazel-bin/attention/kernel/paged_attention_benchmark "ab/bench_$name"
  git checkout -- attention/kernel
}
git diff --quiet HEAD -- attention/kernel || { echo "attention/kernel has local changes" >&2; exit 1; }
build base
build Ug uniform_stage.patch
build Uq uniform_stage_and_query.patch
build F fused_scale_ftz_exp2_on_f2c6b73.patch
build UgF uniform_stage.patch fused_scale_ftz_exp2_on_f2c6b73.patch
