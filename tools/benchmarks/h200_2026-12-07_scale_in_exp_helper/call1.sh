#!/usr/bin/env bash
# Call 1 (device tool, kind nvidia-h200; carry carry_f.tar.xz: gpu_bundle/ of
# 66f206d, ab/bench_main = eee7528's benchmark (main's kernels before F2),
# ab/bench_F2 = d4dff79's (F2), ab/bench_HEAD = the bundle's): every GPU test
# of 66f206d's bundle first. On an H200, if they pass, the peer script over
# every case (issue 10's "Done when" run). On an H100, the A/B of main / F2 /
# HEAD (all head_dim 64 cases, the head_dim 128 / 256 and one-tile controls)
# and the graph-replay memcheck and plan_batch dumps.
set -u
tar -xJf carry_f.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c1_gpu.txt
GPU_SESSION_PACK=$OUT/t.tar.xz timeout 250 bash tools/gpu_session.sh $OUT/t tests | tee $OUT/t_summary.txt
echo "tests: $SECONDS s"
if grep -q H200 $OUT/c1_gpu.txt; then
  grep -q "tests rc=0" $OUT/t_summary.txt || { echo "tests failed: no peer run"; exit 0; }
  GPU_SESSION_PACK=$OUT/c1.tar.xz timeout $((585 - SECONDS)) bash tools/gpu_session.sh $OUT/c1 peers
else
  AB_BENCH_LIMIT_S=60 GPU_SESSION_PACK=$OUT/ab.tar.xz timeout $((480 - SECONDS)) \
    bash tools/gpu_session.sh $OUT/ab ab 3 \
    'DeviceCopy|hd:64/|Verify/heads:32_8/hd:(128|256)/batch:16/q:8/kv:8192/page:16/(iter|dtype)|Decode/heads:32_8/hd:128/batch:(1|32)/q:1/kv:(131072|16384)/page:16/iter|OneTile/' \
    main F2 HEAD
  GPU_SESSION_PACK=$OUT/d.tar.xz timeout $((585 - SECONDS)) bash tools/gpu_session.sh $OUT/d dumps
fi
echo "call: $SECONDS s"
