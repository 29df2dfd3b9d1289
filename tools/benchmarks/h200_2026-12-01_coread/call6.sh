#!/usr/bin/env bash
# Run from the repository root with carry.tar.xz (gpu_bundle/ of 5c8e564,
# ab/bench_NEW: 743d2cd's kernel with 5c8e564's planner, ab/bench_REVIEW:
# 5c8e564). The review commit's one attend_tiles for single and paired steps:
# GPU tests, and an A/B on verify and prefill (the paired kernels' code changed).
tar -xJf carry.tar.xz || exit 1
F='^BM_PagedAttention(Verify|TreeVerify|Prefill)/'
bash tools/gpu_session.sh $OUT/r tests ab 2 "$F" NEW REVIEW
tar -cJf $OUT/call6.tar.xz -C $OUT r
