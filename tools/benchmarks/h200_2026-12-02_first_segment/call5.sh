#!/usr/bin/env bash
# This session's fifth call. carry5.tar.xz: gpu_bundle/ = the bundle of
# 1450ea5 + NF + EV (the planner's even pieces winning within 3% of the best
# plan's busiest worker, kEvenPiecesSlackPercent) + the two host-side
# simplifications: what lands. Every GPU test, a peer run (the bars at this
# HEAD), then the sanitizer and dump checks (EV changes plans, not kernels).
set -o pipefail
tar -xJf carry5.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call5.tar.xz
bash tools/gpu_session.sh $OUT/r tests peers checks
