#!/usr/bin/env bash
# Builds the session's carry archive from a clean checkout (run from the
# repository root): gpu_bundle/ of the checkout and ab/bench_PROBE, the
# benchmark with head_pairs_probe.patch (head_dim 128 shapes of half the KV
# heads and twice the group beside the head_dim 64 shapes they equal byte for
# byte: what a decode kernel reading two head_dim 64 KV heads at a time would
# stream).
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=tools/benchmarks/h200_2026-12-04_head_pairs
git diff --quiet HEAD -- || { echo "build_variants: commit or stash first" >&2; exit 1; }
mkdir -p ab
git apply "$here/head_pairs_probe.patch"
bazel build --config=bundle //attention/kernel:paged_attention_benchmark
cp -f bazel-bin/attention/kernel/paged_attention_benchmark ab/bench_PROBE
git checkout -- attention/kernel/benchmark_shapes.h
[[ -d gpu_bundle ]] || bash tools/gpu_bundle.sh
tar -cf - gpu_bundle ab | xz -9 -T2 > carry.tar.xz
ls -la carry.tar.xz
