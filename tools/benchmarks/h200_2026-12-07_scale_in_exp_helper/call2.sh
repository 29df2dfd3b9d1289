#!/usr/bin/env bash
# Call 2 (the machine call 1 kept warm, same carry): memcheck of the kernel
# test, then racecheck's parts 1-3 (the first targeted cases; the float16
# sweep at pages 1 / 16 / 256; the bfloat16 sweep at page 16: the sweeps run
# the head_dim 64 decode kernel, the one whose SASS 66f206d changed), then
# the graph-replay memcheck and the dumps (`checks` with RACECHECK_PARTS).
set -u
[[ -d gpu_bundle ]] || tar -xJf carry_f.tar.xz || exit 1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/c2_gpu.txt
RACECHECK_PARTS="1 2 3" GPU_SESSION_PACK=$OUT/k.tar.xz timeout 570 \
  bash tools/gpu_session.sh $OUT/k checks
echo "call: $SECONDS s"
