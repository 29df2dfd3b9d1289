#!/usr/bin/env bash
# Call 1 (device tool, kind nvidia-h200; carry carry_lo.tar.xz, build_carry.sh).
# On an H200: the A/B of main / F2 / LO / HEAD over the head_dim 64 cases and
# the controls (ab_step.sh, ~20 s: F2's, LO's and QR's first H200 figures;
# HEAD = the checkout's kernels, d43c58a's PTX), the peer script over
# every case (issue 10's "Done when" run of HEAD's bundle), then every GPU
# test in what is left. On an H100: every GPU test of HEAD's bundle (LO and
# QR in the tree, whose PTX tiles_in_flight call 3 and this folder's call 6
# tested as patches), then racecheck parts 1-3 (the first targeted cases
# and both sweeps, which run the head_dim 64 general kernel). LIMIT_S: the
# call's timeout_s (default 590).
set -u
LIMIT_S=${LIMIT_S:-590}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
tar -xJf carry_lo.tar.xz || exit 1
if grep -q H200 $OUT/gpu.txt; then
  bash tools/benchmarks/h200_2026-12-07_lane_offsets_in_tree/ab_step.sh 120
  echo "ab: $SECONDS s"
  GPU_SESSION_PACK=$OUT/peers.tar.xz timeout 450 bash tools/gpu_session.sh $OUT/peers peers
  echo "peers: $SECONDS s"
  GPU_SESSION_PACK=$OUT/t.tar.xz timeout $((LIMIT_S - 5 - SECONDS)) \
    bash tools/gpu_session.sh $OUT/t tests | tee $OUT/t_summary.txt
else
  GPU_SESSION_PACK=$OUT/t.tar.xz timeout 250 bash tools/gpu_session.sh $OUT/t tests | tee $OUT/t_summary.txt
  echo "tests: $SECONDS s"
  RACECHECK_PARTS="1 2 3" GPU_SESSION_PACK=$OUT/r.tar.xz timeout $((LIMIT_S - 5 - SECONDS)) \
    bash tools/gpu_session.sh $OUT/r racecheck
fi
echo "call: $SECONDS s"
