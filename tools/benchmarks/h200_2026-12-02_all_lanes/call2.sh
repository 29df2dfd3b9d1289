#!/usr/bin/env bash
# This session's second call. carry2.tar.xz: gpu_bundle/ = AL2 + MW (the
# candidate to land), ab/bench_AFS (2a916a2), ab/bench_AL2 (6046fcd: AL with
# WarpArrive's arrival behind a branch the compiler cannot fold, which keeps
# 2a916a2's spills), ab/bench_MWO (2a916a2 + MW alone), ab/bench_MW2 (the
# bundle's). An A/B over every case, five rounds; every GPU test of the
# bundle; racecheck of the bundle in its four parts (0 hazards expected).
set -o pipefail
tar -xJf carry2.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call2.tar.xz
bash tools/gpu_session.sh $OUT/r ab 5 '.' AFS AL2 MWO MW2 tests racecheck
