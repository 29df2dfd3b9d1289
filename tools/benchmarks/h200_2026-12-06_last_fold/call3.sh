#!/usr/bin/env bash
# Call 3 (device tool; carry: carry.tar.xz from
#   bash tools/ab_carry.sh --bundle spread-fold BASE=main SF2=bundle
# i.e. gpu_bundle/ of a82f9c9 (SF2: SF with the kernel parameters passed by
# value) and ab/bench_BASE built at main (ab890cd's kernels)): A/B of SF2
# against BASE as call 2 (one-tile 5 rounds, decode 3), then every GPU test.
set -u
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c3_gpu.txt
GPU_SESSION_PACK=$OUT/c3a.tar.xz AB_BENCH_LIMIT_S=40 timeout 110 bash tools/gpu_session.sh $OUT/c3a ab 5 'OneTile' SF2 BASE
GPU_SESSION_PACK=$OUT/c3b.tar.xz AB_BENCH_LIMIT_S=60 timeout 190 bash tools/gpu_session.sh $OUT/c3b ab 3 \
  'Decode/heads:(32_8|64_8|32_32)/hd:(64|128)/batch:(1|8|32|64|128)/q:1/kv:(1024|4096|32768)/page:16/(it|l2)' SF2 BASE
GPU_SESSION_PACK=$OUT/c3t.tar.xz timeout 270 bash tools/gpu_session.sh $OUT/c3t tests
echo "call: $SECONDS s"
