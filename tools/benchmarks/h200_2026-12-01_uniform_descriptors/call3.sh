#!/usr/bin/env bash
# Third call (run from the repository root with carry.tar.xz: gpu_bundle/ of
# e7c0337 = UqF, ab/bench_base = 02d5c50, ab/bench_UgF467 = 467d6f6, ab/bench_UqF =
# the bundle's benchmark): the A/B of the three on the paired kernels' shapes, then every
# GPU test, the peer run and the sanitizer/dump checks of e7c0337. Each step's records
# are packed as it ends, so a call cut short still returns what ran.
set -o pipefail
tar -xJf carry.tar.xz || exit 1
pack() { tar -cJf $OUT/call3.tar.xz -C $OUT r; }
F='^BM_PagedAttention(Verify|TreeVerify|Prefill)/'
bash tools/gpu_session.sh $OUT/r ab 3 "$F" base UgF467 UqF; pack
bash tools/gpu_session.sh $OUT/r tests; pack
bash tools/gpu_session.sh $OUT/r peers; pack
bash tools/gpu_session.sh $OUT/r checks; pack
