#!/usr/bin/env bash
# This session's fourth call. carry4.tar.xz: gpu_bundle/ (NF's, as in
# call3), ab/bench_NF (its benchmark) and ab/bench_EV (the same with the planner's
# even-pieces candidate winning within 3% of the best plan's busiest worker:
# PA_EVEN_SLACK_PERCENT=3 in attention/planner/work_partition.cc, a throwaway
# build). A/B over every case, five rounds: the four plans EV changes
# (32/32 b1 128k decode, 32/8 draft-extend b8 32k q2/q3/q4) against the rest
# as controls (same plans).
set -o pipefail
tar -xJf carry4.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call4.tar.xz
bash tools/gpu_session.sh $OUT/r ab 5 '.' NF EV
