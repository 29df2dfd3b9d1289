# Call 2 (2026-12-05, the forty-sixth session). Carry: carry.tar.xz from
# `bash tools/ab_carry.sh --bundle 8729798 MAIN=bundle PROBE=350b0d8` with
# ab/bench_STEP (PROBE with PA_PROBE_STEP_INPUTS_IN_L2=1; predictions.txt).
# A/B of MAIN, PROBE (control) and STEP, 3 rounds; then cuDNN with its query
# in L2 (sdpa_step_inputs.py). Last, on an H200 only, the one-tile probe
# (ab/one_tile_floor, built as call 1's): it has never run on the bar's card.
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c2_gpu.txt
AB_BENCH_LIMIT_S=90 GPU_SESSION_PACK=$OUT/c2.tar.xz timeout 420 bash tools/gpu_session.sh $OUT/c2 \
  ab 3 'Decode/heads:(32|64)_8/hd:128/batch:1/q:1/kv:(32768|131072)/page:16/iter|Decode/heads:32_8/hd:(64|256)/batch:1/q:1/kv:131072/page:16/iter|Decode/heads:32_8/hd:128/batch:(32/q:1/kv:16384|128/q:1/kv:1024)/page:16/iter|Verify/heads:(32|64)_8/hd:128/batch:1/q:8/kv:32768/page:16/iter|Verify/heads:32_8/hd:128/batch:16/q:8/kv:8192/page:16/iter|DraftExtend/heads:32_8/hd:128/batch:1/q:4/kv:32768/page:16/iter' MAIN PROBE STEP
cp $OUT/c2/ab_table.txt $OUT/c2_ab_table.txt
timeout 120 python3 tools/benchmarks/h200_2026-12-05_l2_hint/sdpa_step_inputs.py 2>&1 | tee $OUT/c2_sdpa_step_inputs.txt
if grep -q H200 $OUT/c2_gpu.txt && [ -x ab/one_tile_floor ]; then
  for i in 1 2; do timeout 60 ab/one_tile_floor 2>&1 | tee $OUT/c2_one_tile_floor_$i.txt; done
fi
echo "call: $SECONDS s"
