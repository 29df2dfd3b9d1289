#!/usr/bin/env bash
# This session's first call. carry1.tar.xz: gpu_bundle/ = SG's bundle
# (1450ea5 + the decode kernel's guessed first segment + two host-side
# simplifications), ab/bench_BASE (1450ea5), ab/bench_SG, ab/bench_SGNF (SG
# plus the spread merge's waiting pieces without their second fence).
# 1. A/B of the three builds over every benchmark case, three rounds;
# 2. SG's GPU tests and sanitizer checks (also the first memcheck/racecheck
#    of UQT's deep-ring tree kernel, whose PTX SG leaves as 1450ea5's);
# 3. ncu (one pass, L2 flushed) of tree and chain q64 at b64 on SG's bundle:
#    UQT's DRAM bytes, not measured last session.
set -o pipefail
tar -xJf carry1.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call1.tar.xz
bash tools/gpu_session.sh $OUT/r ab 3 '.' BASE SG SGNF tests checks \
  ncu bundle '^BM_PagedAttention(TreeVerify|Verify)/heads:32_8/hd:128/batch:64/q:64/'
