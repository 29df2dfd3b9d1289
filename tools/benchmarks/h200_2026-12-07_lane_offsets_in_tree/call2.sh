#!/usr/bin/env bash
# Call 2 (the machine call 1 kept warm, same carry): memcheck of the kernel
# test, racecheck part 4 (the modes test's tree cases: the head_dim 64 tree
# kernel), the graph-replay memcheck and the plan_batch dumps (`checks` with
# RACECHECK_PARTS). On an H200, whose call 1 ran no racecheck, parts 1-4.
set -u
LIMIT_S=${LIMIT_S:-590}
[[ -d gpu_bundle ]] || tar -xJf carry_lo.tar.xz || exit 1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/c2_gpu.txt
parts="4"
grep -q H200 $OUT/c2_gpu.txt && parts="1 2 3 4"
RACECHECK_PARTS="$parts" GPU_SESSION_PACK=$OUT/k.tar.xz timeout $((LIMIT_S - 5)) \
  bash tools/gpu_session.sh $OUT/k checks
echo "call: $SECONDS s"
