#!/usr/bin/env bash
# Call 6 (any GPU; carry carry_qrt.tar.xz, build_qrt_carry.sh): every GPU test
# of HEAD's bundle with the kernel, modes and graph-replay tests rebuilt with
# query_fragments_in_tree.patch, then racecheck parts 1-3 (the parts that run
# the head_dim 64 general kernel, the only kernel the patch changes). If both
# are clean, the patch can land: its general kernel's PTX is the one calls 3
# and 5 measured (W1 0.99) and kernel-tested. LIMIT_S: the call's timeout_s
# (default 590).
set -u
LIMIT_S=${LIMIT_S:-590}
tar -xJf carry_qrt.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $OUT/gpu.txt
cat gpu_bundle/REVISION
GPU_SESSION_PACK=$OUT/t.tar.xz timeout 250 bash tools/gpu_session.sh $OUT/t tests | tee $OUT/t_summary.txt
echo "tests: $SECONDS s"
RACECHECK_PARTS="1 2 3" GPU_SESSION_PACK=$OUT/r.tar.xz timeout $((LIMIT_S - 5 - SECONDS)) \
  bash tools/gpu_session.sh $OUT/r racecheck
echo "call: $SECONDS s"
