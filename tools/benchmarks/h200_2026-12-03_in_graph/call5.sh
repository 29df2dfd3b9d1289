#!/usr/bin/env bash
# Per-segment timeline of 32/32 decode (the lanes' drift): ab/bench_TL is the
# benchmark of 3f6b0d7 built with pa_timeline_drift.patch applied
# (pa_timeline_49e8e74.patch of h200_2026-12-02_boundary_timeline/ plus the
# plan written beside the dumps). Carry: gpu_bundle/lib, gpu_bundle/REVISION,
# ab/bench_TL (carry5.tar.xz, 2.4 MB). Summarise with
# `python3 drift.py DIR` (drift_summary.txt).
tar -xJf carry5.tar.xz && export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib && mkdir -p $OUT/tl &&
  PA_TIMELINE_DIR=$OUT/tl ab/bench_TL \
    --benchmark_filter='^BM_PagedAttentionDecode/heads:32_32/hd:128/batch:(128|64|32)/q:1/kv:(1024|4096)/' 2>&1 |
  grep -E "median" | awk '{print $1,$2,$3}'
cd $OUT && tar -cJf tl.tar.xz tl && rm -rf tl
