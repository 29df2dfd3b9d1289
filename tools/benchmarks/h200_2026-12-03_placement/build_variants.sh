#!/usr/bin/env bash
# Builds the session's carry archive from a clean checkout (run from the
# repository root): gpu_bundle/ of the checkout, ab/bench_PLB (the benchmark
# with placement_probe.patch: PA_PROBE_SHIFTS="K:V,..." registers every case
# once per pair of byte shifts of its K and V pools in the arena) and
# wrappers running bench_PLB with eight placements: ab/bench_SHIFT (in order),
# ab/bench_SHIFTR (reversed), ab/bench_SHIFTGAP (in order, the host idle 2 ms
# after every timed replay). Call 1 ran carry1.tar.xz (SHIFT only, no gap or
# stamps in the patch yet), call 2 carry2.tar.xz.
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=tools/benchmarks/h200_2026-12-03_placement
git diff --quiet HEAD -- || { echo "build_variants: commit or stash first" >&2; exit 1; }
mkdir -p ab
git apply "$here/placement_probe.patch"
bazel build --config=bundle //attention/kernel:paged_attention_benchmark
cp -f bazel-bin/attention/kernel/paged_attention_benchmark ab/bench_PLB
git checkout -- attention/kernel/paged_attention_benchmark.cc
M=1048576
shifts="0:0,$((2 * M)):0,$((4 * M)):0,$((6 * M)):0,$((10 * M)):0,0:$((2 * M)),0:65536,0:0"
reversed=$(echo "$shifts" | tr ',' '\n' | tac | paste -sd,)
bash tools/ab_wrapper.sh SHIFT PLB PA_PROBE_SHIFTS=$shifts
bash tools/ab_wrapper.sh SHIFTR PLB PA_PROBE_SHIFTS=$reversed
bash tools/ab_wrapper.sh SHIFTGAP PLB PA_PROBE_GAP_US=2000 PA_PROBE_SHIFTS=$shifts
[[ -d gpu_bundle ]] || bash tools/gpu_bundle.sh
cp -f gpu_bundle/bin/attention_kernel_paged_attention_benchmark ab/bench_HEAD
tar -cf - gpu_bundle ab | xz -9 -T2 > carry.tar.xz
ls -la carry.tar.xz
