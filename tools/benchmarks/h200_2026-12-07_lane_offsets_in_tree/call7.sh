#!/usr/bin/env bash
# Call 7 (the warm machine after calls 1-2, same carry, carry_lo.tar.xz):
# call 1's A/B alone (main / F2 / LO / HEAD, three rounds, the head_dim 64
# cases and controls), on whatever card is held.
set -u
[[ -d gpu_bundle ]] || tar -xJf carry_lo.tar.xz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/c7_gpu.txt
AB_BENCH_LIMIT_S=30 GPU_SESSION_PACK=$OUT/ab.tar.xz timeout 150 \
  bash tools/gpu_session.sh $OUT/ab ab 3 \
  'DeviceCopy|hd:64/|Verify/heads:32_8/hd:(128|256)/batch:16/q:8/kv:8192/page:16/(iter|dtype)|Decode/heads:32_8/hd:128/batch:(1|32)/q:1/kv:(131072|16384)/page:16/iter|OneTile/' \
  main F2 LO HEAD
echo "call: $SECONDS s"
