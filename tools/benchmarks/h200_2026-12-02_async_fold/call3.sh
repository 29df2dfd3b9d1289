#!/usr/bin/env bash
# This session's third call. carry3.tar.xz: gpu_bundle/ = aac7011 + AF + AFQ
# (PP dropped after call 2), ab/bench_EV, ab/bench_AF (call 1's, carried
# but left out of the A/B after failed machine starts cut the budget)
# and ab/bench_AFQ. Every GPU test, the sanitizer and dump checks, an A/B
# over every case (three rounds), then a peer run (last: the budget left
# after the failed machine starts might not cover it).
set -o pipefail
tar -xJf carry3.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call3.tar.xz
bash tools/gpu_session.sh $OUT/r tests checks ab 3 '.' EV AFQ peers
