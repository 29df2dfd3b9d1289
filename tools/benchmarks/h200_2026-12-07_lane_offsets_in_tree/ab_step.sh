#!/usr/bin/env bash
# The A/B of main / F2 / LO / HEAD (carry_lo.tar.xz, unpacked in the
# repository root), three rounds over the head_dim 64 cases and the controls,
# packed into $OUT/ab.tar.xz; call 1 runs it on an H200, call 7 ran it alone.
#   bash tools/benchmarks/h200_2026-12-07_lane_offsets_in_tree/ab_step.sh TIMEOUT_S
set -u
AB_BENCH_LIMIT_S=30 GPU_SESSION_PACK=$OUT/ab.tar.xz timeout "$1" \
  bash tools/gpu_session.sh $OUT/ab ab 3 \
  'DeviceCopy|hd:64/|Verify/heads:32_8/hd:(128|256)/batch:16/q:8/kv:8192/page:16/(iter|dtype)|Decode/heads:32_8/hd:128/batch:(1|32)/q:1/kv:(131072|16384)/page:16/iter|OneTile/' \
  main F2 LO HEAD
