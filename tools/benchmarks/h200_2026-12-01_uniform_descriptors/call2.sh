#!/usr/bin/env bash
# Second call (run from the repository root with carry.tar.xz: gpu_bundle/ of
# 467d6f6 = UgF committed, ab/bench_base = 02d5c50, ab/bench_UgF467 = the
# bundle's benchmark): the A/B again on the paired kernels' shapes, then every
# GPU test, the peer run and the sanitizer/dump checks. Each step's records
# are packed as it ends, so a call cut short still returns what ran.
set -o pipefail
tar -xJf carry.tar.xz || exit 1
pack() { tar -cJf $OUT/call2.tar.xz -C $OUT r; }
F='^BM_PagedAttention(Verify|TreeVerify|Prefill)/'
bash tools/gpu_session.sh $OUT/r ab 3 "$F" base UgF467; pack
bash tools/gpu_session.sh $OUT/r tests; pack
bash tools/gpu_session.sh $OUT/r peers; pack
bash tools/gpu_session.sh $OUT/r checks; pack
