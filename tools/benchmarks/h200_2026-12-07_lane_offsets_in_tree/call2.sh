#!/usr/bin/env bash
# Call 2 (the machine call 1 kept warm, same carry, carry_lo.tar.xz): memcheck
# of the kernel test, racecheck, the graph-replay memcheck and the plan_batch
# dumps (`checks` with RACECHECK_PARTS): part 4 (the modes test's tree cases)
# after an H100's call 1, which ran parts 1-3; parts 1-4 after an H200's
# (every part that runs the head_dim 64 general or tree kernel). QR's A/B,
# first planned here, ran in call 3. LIMIT_S: the call's timeout_s (default 590).
set -u
LIMIT_S=${LIMIT_S:-590}
[[ -d gpu_bundle ]] || tar -xJf carry_lo.tar.xz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/c2_gpu.txt
parts="4"
grep -q H200 $OUT/c2_gpu.txt && parts="1 2 3 4"
RACECHECK_PARTS="$parts" GPU_SESSION_PACK=$OUT/k.tar.xz timeout $((LIMIT_S - 5)) \
  bash tools/gpu_session.sh $OUT/k checks
echo "call: $SECONDS s"
