#!/usr/bin/env bash
# Builds the session's carry archive from a clean checkout (run from the
# repository root). Call 1: gpu_bundle/ and ab/bench_PROBE, the benchmark of
# 3dcafa8 with head_pairs_probe.patch (head_dim 128 shapes of half the KV heads
# and twice the group beside the head_dim 64 shapes they equal byte for byte:
# what a decode kernel reading two head_dim 64 KV heads at a time streams).
# Calls 2 and 3 (REV = the KV head pairs commit): ab/bench_PROBE as in call 1
# (built at 3dcafa8) beside REV's benchmark, and gpu_bundle/ of REV.
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=tools/benchmarks/h200_2026-12-04_head_pairs
git diff --quiet HEAD -- || { echo "build_variants: commit or stash first" >&2; exit 1; }
mkdir -p ab
build_probe() {  # $1: the name under ab/
  git apply "$here/head_pairs_probe.patch"
  bazel build --config=bundle //attention/kernel:paged_attention_benchmark
  cp -f bazel-bin/attention/kernel/paged_attention_benchmark "ab/bench_$1"
  git checkout -- attention/kernel/benchmark_shapes.h
}
head=$(git rev-parse HEAD)
if [[ ! -f ab/bench_PROBE ]]; then
  git checkout -q 3dcafa8 -- attention testing
  build_probe PROBE
  git checkout -q "$head" -- attention testing
fi
# Call 2 built ab/bench_PAIRS (build_probe PAIRS at b777bf5). Call 3: the
# bundle of REV and its benchmark as ab/bench_NEW (the head_dim 64 b128 4k
# case is one of its shapes now, as it is one of bench_PROBE's).
rm -f ab/bench_PAIRS
bash tools/gpu_bundle.sh
cp -f gpu_bundle/bin/attention_kernel_paged_attention_benchmark ab/bench_NEW
tar -cf - gpu_bundle ab | xz -9 -T2 > carry.tar.xz
ls -la carry.tar.xz
