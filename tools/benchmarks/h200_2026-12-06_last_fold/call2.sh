#!/usr/bin/env bash
# Call 2 (device tool; carry: carry.tar.xz from
#   bash tools/ab_carry.sh --bundle spread-fold BASE=main SF=bundle
# i.e. gpu_bundle/ of a86f5e6 (SF) and ab/bench_BASE built at main, 75557a2,
# whose kernels are ab890cd's): A/B of SF against BASE (the one-tile cases,
# 5 rounds; decode, 3 rounds), then every GPU test on SF's bundle.
set -u
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c2_gpu.txt
GPU_SESSION_PACK=$OUT/c2a.tar.xz AB_BENCH_LIMIT_S=40 timeout 110 bash tools/gpu_session.sh $OUT/c2a ab 5 'OneTile' SF BASE
GPU_SESSION_PACK=$OUT/c2b.tar.xz AB_BENCH_LIMIT_S=60 timeout 190 bash tools/gpu_session.sh $OUT/c2b ab 3 \
  'Decode/heads:(32_8|64_8|32_32)/hd:(64|128)/batch:(1|8|32|64|128)/q:1/kv:(1024|4096|32768)/page:16/(it|l2)' SF BASE
GPU_SESSION_PACK=$OUT/c2t.tar.xz timeout 270 bash tools/gpu_session.sh $OUT/c2t tests
echo "call: $SECONDS s"
