#!/usr/bin/env bash
# This session's fourth call. carry4.tar.xz: gpu_bundle/ = 797b2d2 (AL2 alone:
# MW reverted; the attention kernels as 6046fcd's, the merge kernel as
# 2a916a2's). Every GPU test, the checks (memcheck, racecheck in four parts,
# graph-replay memcheck, plan_batch dumps), then the peer run.
set -o pipefail
tar -xJf carry4.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call4.tar.xz
bash tools/gpu_session.sh $OUT/r tests checks peers
