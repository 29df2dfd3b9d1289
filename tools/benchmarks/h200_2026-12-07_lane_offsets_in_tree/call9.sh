#!/usr/bin/env bash
# Call 9 (device tool, kind nvidia-h200; carry carry_lo.tar.xz, build_carry.sh):
# call 1's H200 branch reordered for a short device budget (the sixty-ninth
# session's last three asks, from ~600 s left): the peer run of HEAD's
# bundle first (the "Done when" run, ~300 s), then the A/B of main /
# F2 / LO / HEAD (ab_step.sh) and the GPU tests in what is left. On anything
# but an H200 it runs nothing. LIMIT_S: the call's timeout_s.
set -u
LIMIT_S=${LIMIT_S:-400}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
grep -q H200 $OUT/gpu.txt || { echo "not an H200: nothing to run"; exit 0; }
tar -xJf carry_lo.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/peers.tar.xz timeout $((LIMIT_S - 10 - SECONDS)) \
  bash tools/gpu_session.sh $OUT/peers peers
echo "peers: $SECONDS s"
left=$((LIMIT_S - 5 - SECONDS))
if ((left > 40)); then
  bash tools/benchmarks/h200_2026-12-07_lane_offsets_in_tree/ab_step.sh $((left < 60 ? left : 60))
  echo "ab: $SECONDS s"
fi
left=$((LIMIT_S - 5 - SECONDS))
if ((left > 30)); then
  GPU_SESSION_PACK=$OUT/t.tar.xz timeout $left bash tools/gpu_session.sh $OUT/t tests | tee $OUT/t_summary.txt
fi
echo "call: $SECONDS s"
