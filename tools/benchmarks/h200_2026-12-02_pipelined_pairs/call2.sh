#!/usr/bin/env bash
# Second call of 2026-12-02 (run from the repository root with carry.tar.xz:
# gpu_bundle/ of PVQ = the paired kernels with a producer warpgroup and
# setmaxnreg (consumers at 200 registers) and, for requests whose units share
# K/V, each step's P V issued by the next step before its Q K^T;
# ab/bench_S = a7be378's kernel, ab/bench_WG = the producer warpgroup without
# the pipeline, ab/bench_PVQ = the bundle's benchmark): the A/B of the three
# on the paired kernels' shapes, every GPU test, then the peer run of the
# bundle. Packed after each step.
set -o pipefail
tar -xJf carry.tar.xz || exit 1
pack() { tar -cJf $OUT/call2.tar.xz -C $OUT r; }
F='^BM_PagedAttention(Verify|TreeVerify|Prefill)/'
bash tools/gpu_session.sh $OUT/r ab 3 "$F" S WG PVQ; pack
bash tools/gpu_session.sh $OUT/r tests; pack
bash tools/gpu_session.sh $OUT/r peers; pack
