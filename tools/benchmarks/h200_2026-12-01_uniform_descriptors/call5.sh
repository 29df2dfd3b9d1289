#!/usr/bin/env bash
# Fifth call (run from the repository root with carry.tar.xz: gpu_bundle/ of
# the commit after e7c0337 = S, the scale-in-exponent softmax only for requests
# whose units share K/V; ab/bench_base = 02d5c50, ab/bench_UqF = e7c0337,
# ab/bench_S = the bundle's benchmark): the A/B of the three on the paired
# kernels' shapes, then every GPU test (no peer run: the device time left
# would not cover it). Packed after each step.
set -o pipefail
tar -xJf carry.tar.xz || exit 1
pack() { tar -cJf $OUT/call5.tar.xz -C $OUT r; }
F='^BM_PagedAttention(Verify|TreeVerify|Prefill)/'
bash tools/gpu_session.sh $OUT/r ab 3 "$F" base UqF S; pack
bash tools/gpu_session.sh $OUT/r tests; pack
