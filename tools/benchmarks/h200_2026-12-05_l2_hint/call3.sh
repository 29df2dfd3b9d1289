# Call 3 (2026-12-05, the forty-seventh session): call 2's H200-only part
# alone: the one-tile probe and our OneTile cases, on an H200 only (an H100
# answers nothing: both ran on H100s in calls 1 and the forty-fifth session's
# calls). Carry: call 2's carry.tar.xz (MAIN's bundle, ab/one_tile_floor).
# Prediction: predictions.txt, "Added to call 2".
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c3_gpu.txt
grep -q H200 $OUT/c3_gpu.txt || { echo "not an H200: nothing run"; exit 0; }
for i in 1 2; do timeout 60 ab/one_tile_floor 2>&1 | tee $OUT/c3_one_tile_floor_$i.txt; done
AB_BENCH_LIMIT_S=90 timeout 200 bash tools/gpu_session.sh $OUT/c3 \
  ab 3 'OneTile/heads:32_8/hd:128/batch:1/q:(1|8)/kv:64/page:16/l2:warm/iter' MAIN
cp $OUT/c3/ab_table.txt $OUT/c3_ab_table.txt
echo "call: $SECONDS s"
