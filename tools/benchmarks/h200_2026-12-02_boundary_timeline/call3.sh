#!/usr/bin/env bash
# This session's third call. carry3.tar.xz: gpu_bundle/ = c06f7d6 (HL2: head
# lanes in blocks of span workers), ab/bench_MPI (the kernels and partition
# of 49e8e74), ab/bench_HL (e671d34, HL's first form) and ab/bench_HL2 (the
# bundle's benchmark). A/B of every case, three rounds; every GPU test with
# the new plans; the peer run; then the checks (memcheck, racecheck, graph
# replays under memcheck, plan_batch dumps).
set -o pipefail
tar -xJf carry3.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call3.tar.xz
bash tools/gpu_session.sh $OUT/r ab 3 . MPI HL HL2 tests peers checks
