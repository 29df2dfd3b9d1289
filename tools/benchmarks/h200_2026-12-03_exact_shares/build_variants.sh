#!/usr/bin/env bash
# Builds the session's carry archives from a clean checkout (run from the
# repository root): gpu_bundle/ of the checkout, ab/bench_HEAD (its
# benchmark), ab/bench_EXB (the benchmark with exact_shares_probe.patch: a
# balanced candidate cut exactly at share ends, off unless PA_EXACT is set)
# and ab/bench_EX0 (a wrapper that runs bench_EXB with PA_EXACT=0: the
# candidate kept when the model says its busiest worker ends strictly sooner).
#   call 1: 834ee10, gpu_bundle only            -> carry1.tar.xz
#   call 2: 834ee10, gpu_bundle + ab            -> carry2.tar.xz
#   call 3: 34956dd, gpu_bundle + ab (bench_EXB still 834ee10's + the patch)
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=tools/benchmarks/h200_2026-12-03_exact_shares
git diff --quiet HEAD -- || { echo "build_variants: commit or stash first" >&2; exit 1; }
mkdir -p ab
git apply "$here/exact_shares_probe.patch"
bazel build --config=bundle //attention/kernel:paged_attention_benchmark
cp -f bazel-bin/attention/kernel/paged_attention_benchmark ab/bench_EXB
git checkout -- attention/planner/work_partition.cc
bash tools/ab_wrapper.sh EX0 EXB PA_EXACT=0
bash tools/gpu_bundle.sh
cp -f gpu_bundle/bin/attention_kernel_paged_attention_benchmark ab/bench_HEAD
tar -cf - gpu_bundle ab | xz -9 -T2 > carry.tar.xz
ls -la carry.tar.xz
