#!/usr/bin/env bash
# This session's first call. carry1.tar.xz: gpu_bundle/ = aac7011 + AF (the
# decode kernel's key ways out of step: tiles dealt round robin across
# segments, queries on mbarriers of their own, whole units of <= 8 rows folded
# by the way of the last tile from fold slots, no CTA barrier), ab/bench_EV
# (aac7011's benchmark: the kernel and planner of f27c112) and ab/bench_AF.
# Every GPU test (the decode kernel must still give the general kernel's bits),
# then an A/B over every case, five rounds.
set -o pipefail
tar -xJf carry1.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call1.tar.xz
bash tools/gpu_session.sh $OUT/r tests ab 5 '.' EV AF
