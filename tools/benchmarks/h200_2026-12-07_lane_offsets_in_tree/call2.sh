#!/usr/bin/env bash
# Call 2 (the machine call 1 kept warm; carry carry_qr.tar.xz, build_qr_carry.sh:
# call 1's bundle and A/B binaries plus W1, QR and W1QR). First the A/B of
# HEAD / QR on main's plans and W1 / W1QR with whole units (three rounds,
# ~30 s: does keeping Q's fragments raise a CTA's cap?), then memcheck of the
# kernel test, racecheck part 4 (the modes test's tree cases: the head_dim 64
# tree kernel), the graph-replay memcheck and the plan_batch dumps (`checks`
# with RACECHECK_PARTS). On an H200, whose call 1 ran no racecheck, parts
# 1-4. LIMIT_S: the call's timeout_s (default 590).
set -u
LIMIT_S=${LIMIT_S:-590}
tar -xJf carry_qr.tar.xz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/c2_gpu.txt
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
AB_BENCH_LIMIT_S=45 GPU_SESSION_PACK=$OUT/ab.tar.xz timeout 60 \
  bash tools/gpu_session.sh $OUT/ab ab 3 \
  'DeviceCopy|hd:64/|Verify/heads:32_8/hd:(128|256)/batch:16/q:8/kv:8192/page:16/(iter|dtype)' HEAD QR
AB_BENCH_LIMIT_S=45 GPU_SESSION_PACK=$OUT/w1.tar.xz timeout 60 \
  bash tools/gpu_session.sh $OUT/w1 ab 3 \
  'DeviceCopy|Verify/heads:32_8/hd:(64|128)/batch:16/q:8/kv:8192/page:16/(iter|dtype)' W1 W1QR
echo "ab: $SECONDS s"
parts="4"
grep -q H200 $OUT/c2_gpu.txt && parts="1 2 3 4"
RACECHECK_PARTS="$parts" GPU_SESSION_PACK=$OUT/k.tar.xz timeout $((LIMIT_S - 5 - SECONDS)) \
  bash tools/gpu_session.sh $OUT/k checks
echo "call: $SECONDS s"
