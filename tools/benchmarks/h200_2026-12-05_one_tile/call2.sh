# Call 2 (2026-12-05, the forty-fifth session): the probe again with `direct`
# rewritten (call 1's took 7.2 us: 128 threads, a half row each, a serial
# 64-key loop for O), twice, beside the empty kernel and the chain.
# Carry: carry_probe.tar.xz (ab/one_tile_floor).
tar -xJf carry_probe.tar.xz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c2_gpu.txt
for i in 1 2; do ab/one_tile_floor 2>&1 | tee $OUT/c2_one_tile_floor_$i.txt; done
