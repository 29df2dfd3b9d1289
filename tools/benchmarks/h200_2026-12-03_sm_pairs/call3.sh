#!/usr/bin/env bash
# This session's third call. carry3.tar.xz: gpu_bundle/ = 05439ad + fm2.patch
# (FM2: FM's merge inlined, and only at head_dim <= 128), ab/bench_HEAD
# (05439ad's benchmark) and ab/bench_FM2 (the bundle's). A/B of every case,
# three rounds; the GPU tests, the peer run and the checks (memcheck,
# racecheck, graph replays under memcheck, plan_batch dumps) of its bundle.
set -o pipefail
tar -xJf carry3.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call3.tar.xz
bash tools/gpu_session.sh $OUT/r ab 3 . HEAD FM2 tests peers checks
