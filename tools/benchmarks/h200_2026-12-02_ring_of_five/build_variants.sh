#!/usr/bin/env bash
# Builds the next device call's carry from a clean checkout of the commit
# that added this folder (run from the repository root; ~15 min on 2 cores):
#   ab/bench_S       HEAD's benchmark (a7be378's kernel, S)
#   ab/bench_R5      + ring_of_five.patch (five stages, one query tile, in the
#                    paired-tiles kernels)
#   ab/bench_R5WG    + ring_of_five_producer_warpgroup_pipelined.patch with
#                    kPipelined = false (R5 plus a producer warpgroup and
#                    setmaxnreg 72 / 184)
#   ab/bench_R5PVQ2  the same patch as it is (plus the pipelined paired steps)
#   ab/bench_PF2     S + l2_prefetch_ids_ahead.patch (L2 prefetch four tiles
#                    ahead on TMA units, page ids looked up a tile earlier)
#   gpu_bundle/      R5's bundle (tests, benchmarks, tools)
#   carry.tar.xz     all of it, xz -9 (must fit beside the tree: 64 MiB in all)
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=tools/benchmarks/pending_2026-12-03_ring_of_five
kernel=attention/kernel/paged_attention_kernel.cuh
git diff --quiet HEAD -- attention/ || { echo "attention/ has local changes" >&2; exit 1; }
mkdir -p ab
build_bench() {  # name
  bazel build --config=bundle //attention/kernel:paged_attention_benchmark
  cp -f bazel-bin/attention/kernel/paged_attention_benchmark "ab/bench_$1"
  chmod u+w "ab/bench_$1"
}
restore() { git checkout -- attention/kernel/; }
trap restore EXIT
build_bench S
git apply "$here/ring_of_five_producer_warpgroup_pipelined.patch"
build_bench R5PVQ2
sed -i 's/constexpr bool kPipelined = kScaleInExp;/constexpr bool kPipelined = false \&\& kScaleInExp;/' "$kernel"
grep -q 'kPipelined = false' "$kernel"
build_bench R5WG
restore
git apply "$here/l2_prefetch_ids_ahead.patch"
build_bench PF2
restore
git apply "$here/ring_of_five.patch"
bash tools/gpu_bundle.sh
echo "$(git rev-parse --short HEAD)+R5-uncommitted" > gpu_bundle/REVISION  # the peer JSON's git_revision
cp -f gpu_bundle/bin/attention_kernel_paged_attention_benchmark ab/bench_R5
restore
tar -cf - gpu_bundle ab/bench_S ab/bench_R5 ab/bench_R5WG ab/bench_R5PVQ2 ab/bench_PF2 | xz -9 -T2 > carry.tar.xz
ls -la carry.tar.xz
