#!/usr/bin/env bash
# This session's second call. carry2.tar.xz: gpu_bundle/ = aac7011 + AF + PP
# (the decode producer crosses a segment boundary without a dependent round
# trip), ab/bench_EV (aac7011's), ab/bench_AF (call 1's) and ab/bench_AFPP.
# Every GPU test of AF + PP, then an A/B over every case, five rounds.
set -o pipefail
tar -xJf carry2.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call2.tar.xz
bash tools/gpu_session.sh $OUT/r tests ab 5 '.' EV AF AFPP
