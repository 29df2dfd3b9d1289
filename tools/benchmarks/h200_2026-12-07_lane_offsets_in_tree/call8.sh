#!/usr/bin/env bash
# Call 8 (an H100 kept warm after an ask for an H200 that found an H100 and
# ran nothing; same carry, carry_lo.tar.xz): racecheck parts 5-8 of HEAD's
# bundle, so that all eight parts have run on it (parts 1-4: calls 1-2).
[[ -d gpu_bundle ]] || tar -xJf carry_lo.tar.xz || exit 1; nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/c8_gpu.txt; RACECHECK_PARTS="5 6 7 8" GPU_SESSION_PACK=$OUT/r.tar.xz timeout 480 bash tools/gpu_session.sh $OUT/r racecheck; echo "call: $SECONDS s"
