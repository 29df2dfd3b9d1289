# Call 3 (2026-12-05, the forty-fifth session): call 2's `direct` took 6.8-7.0
# us (warm) where its chain took 4.1: the probe again with clock64 stamps of
# `direct`'s steps, then Nsight Compute's kernel durations (caches left warm)
# of the probe's kernels and of ours on the one-tile call (q 1).
# Carry: carry_probe.tar.xz (ab/one_tile_floor) and carry.tar.xz (call 1's).
tar -xJf carry_probe.tar.xz && tar -xJf carry.tar.xz --exclude=ab/one_tile_floor || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c3_gpu.txt
for i in 1 2; do ab/one_tile_floor 2>&1 | tee $OUT/c3_one_tile_floor_$i.txt; done
metrics=gpu__time_duration.sum,sm__cycles_elapsed.max,smsp__inst_executed.sum
timeout 120 ncu --cache-control none --clock-control none --metrics $metrics -c 12 \
  ab/one_tile_floor > $OUT/c3_ncu_probe.txt 2>&1
timeout 120 ncu --cache-control none --clock-control none --metrics $metrics \
  -k regex:PagedAttentionKernel -c 6 \
  gpu_bundle/bin/attention_kernel_paged_attention_benchmark \
  --benchmark_filter='OneTile/.*q:1/' > $OUT/c3_ncu_ours.txt 2>&1
grep -E '^  [A-Za-z_].*\(|gpu__time_duration|sm__cycles_elapsed|inst_executed' $OUT/c3_ncu_probe.txt | head -60
grep -E 'PagedAttentionKernel|gpu__time_duration|sm__cycles_elapsed|inst_executed' $OUT/c3_ncu_ours.txt | head -30
